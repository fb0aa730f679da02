// `--devices 0,1,...`: one worker process per GPU, each a `kbench run --shard k/n` (or grid) of
// its own with CUDA_VISIBLE_DEVICES naming its GPU, started by the parent from the parent's
// own command line; the parent waits, starts a worker that died once more in a fresh process,
// and merges what they wrote (experiments/shard_merge.hpp).
//
// A process per GPU, not a thread: a CUDA context that meets a fault (an illegal address, a
// kernel killed by a timeout) does not survive it, and a worker's death then costs its shard's
// cases, not the run (issue 19 builds its fault isolation on this).
//
// Fault isolation (issue 19): each worker reports the step it is on (harness/worker_steps.hpp).
// A worker that dies while a step names a variant of a case (an illegal address: its CUDA
// context is lost, its next CUDA call fails and it exits), or that reports no new step for the
// step deadline (a kernel that never ends: the parent kills it), has that variant recorded as
// faulted with its error, and is started again in a fresh process that leaves out every pair
// that faulted so far; the attempt that died is lost whole (its samples were in its memory),
// the one that finishes holds every other variant. `kbench run --isolate` is `--devices` with
// the one device of --device.
//
// The pieces a test can drive without a GPU: the worker's command line and visible device are
// pure functions, and run_workers takes the program to start, so that a test starts a script
// that writes a canned shard result or dies.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/shard.hpp"
#include "harness/worker_steps.hpp"
#include "record/result.hpp"

namespace kbench {

// "0,1,3" -> {0, 1, 3}: device indices 0 to 1023, each once. UsageError (one line) for an
// empty list, an empty item, a repeat or anything but digits.
std::vector<int> parse_devices(const std::string& text);

// The worker's command line: the parent's (argv[0] replaced by `program`) without --devices,
// --device, --shard, --out and --unit-timeout (each as "--x v" or "--x=v") and --isolate, then
// --device 0 (its one visible GPU), --shard k/n and --out `out`.
std::vector<std::string> worker_argv(const std::vector<std::string>& parent_argv, const std::string& program,
                                     const ShardSpec& shard, const std::filesystem::path& out);

// The CUDA_VISIBLE_DEVICES that shows a worker the device this process numbers `device`:
// the index itself, or the entry at that position of this process's own CUDA_VISIBLE_DEVICES
// when it has one (as under Slurm, which sets it to the GPUs it allocated). `parent_visible`:
// that variable's value, null when unset. UsageError when the device is not among them.
std::string worker_visible_device(const char* parent_visible, int device);

struct WorkerJob {
  int device = 0;       // as this process numbers devices (--devices)
  std::string visible;  // its CUDA_VISIBLE_DEVICES
  ShardSpec shard;
};

// A variant that faulted in a worker: the step it was on, and why it ended.
struct WorkerFault {
  WorkerStep step;    // names the case and the variant
  std::string error;  // the worker's last error line, or "ran past the N s step deadline ..."
  int attempt = 0;    // the worker attempt it ended
};

// How long a worker may go without reporting a new step before it is killed (--unit-timeout):
// longer than any step of a healthy run (the longest is one case's preparation, its FP64 oracle
// on the host), short enough that a kernel that never ends costs minutes, not the session.
inline constexpr double kDefaultStepTimeoutS = 300;
// The faults one worker may have before its shard is given up: each costs a fresh start that
// prepares the shard again.
inline constexpr int kMaxFaultsPerWorker = 20;

struct WorkerLimits {
  double step_timeout_s = kDefaultStepTimeoutS;
  int max_faults = kMaxFaultsPerWorker;
};

// "300", "2.5": seconds above 0 and at most a day; UsageError (one line) otherwise.
double parse_step_timeout(const std::string& text);

struct WorkerReport {
  WorkerJob job;
  int attempts = 0;               // processes started (2 when the first died)
  std::optional<Result> result;   // what it wrote; none when it failed
  std::filesystem::path file;     // where (under the run's worker folder)
  std::filesystem::path log;      // its last attempt's stdout and stderr
  bool refused = false;           // exit 2: its input was refused (not started again)
  std::string failure;            // why there is no result ("killed by signal 9, twice")
  std::vector<std::string> deaths;  // each attempt that died, and how
  std::vector<WorkerFault> faults;  // each variant that ended an attempt, in order
};

// The command line of a worker for `job`, writing under `out`.
using WorkerCommand = std::function<std::vector<std::string>(const WorkerJob& job, const std::filesystem::path& out)>;

// Starts every job at once, each attempt in its own folder under `dir` (its --out, its log, its
// steps and exclusions files), and waits for all. A worker that exits 0 or 1 (1: a check failed,
// its result still written) with one readable result is done. One that dies (a signal, another
// exit status, no readable result) or passes the step deadline (killed) while its last step
// names a variant has a fault recorded and starts again without that variant on that case (up
// to limits.max_faults); one that dies otherwise is started once more in a fresh process;
// exit 2 (bad input) is not, nor is anything after this process was interrupted: its first
// SIGINT or SIGTERM is passed on to every worker still running, once, and their results,
// marked incomplete, are kept.
std::vector<WorkerReport> run_workers(const std::vector<WorkerJob>& jobs, const WorkerCommand& command,
                                      const std::filesystem::path& dir, const WorkerLimits& limits = {});

}  // namespace kbench
