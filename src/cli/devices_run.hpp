// `kbench run --devices 0,1,...` (and grid's): the plan split into one shard per device, each
// run by a worker process (cli/workers.hpp), the shards merged (experiments/shard_merge.hpp)
// and written as one result, as a run on one GPU writes it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cli/workers.hpp"
#include "record/result.hpp"

namespace kbench {

struct DevicesRequest {
  std::vector<int> devices;            // --devices
  std::string command;                 // "run" or "grid": what the workers run
  std::filesystem::path results_dir;   // where the merged result goes (<out>/<experiment>)
  std::size_t plan_cases = 0;          // the plan's case count, when known: no more workers than cases
  std::string plan_sha256;             // the plan's hash, when known: the workers' must be it
  std::string program;                 // the worker binary; empty: this one (/proc/self/exe)
  std::vector<std::string> parent_argv;  // this process's command line, which the workers' are made from
  double step_timeout_s = 0;             // --unit-timeout; 0: the default (cli/workers.hpp)
};

struct DevicesOutcome {
  Result merged;
  std::filesystem::path written;
  // Empty when every worker wrote its shard; else what was lost, in one line (the merged
  // result then holds the other shards, meta.merge.missing names the lost ones).
  std::string lost;
  // The variants that faulted (extra.faults of the merged result: each in its own record, not
  // timed), in one line; empty when none did.
  std::string faulted;
};

// extra.faults: one object per variant that faulted in a worker (cli/workers.hpp): op, variant,
// dtype, shape, case (its label), phase (the step it was in: check, timer, visit), error, shard.
nlohmann::json faults_json(const std::vector<WorkerReport>& reports);

// Runs the workers and writes the merged result. UsageError (nothing written) when every
// worker refused its input (exit 2: no such device, say); Failure when no worker wrote a result.
// Worker folders and logs are removed when every shard came back, and kept (and named)
// otherwise.
DevicesOutcome run_on_devices(const DevicesRequest& request);

}  // namespace kbench
