// The experiment runner: the one measurement machinery that every experiment (kbench run, and
// grid, probe and spec to come) calls. An experiment declares its cases and what it reports;
// the runner does the rest, in this order:
//
// 1. Prepare and check every case before any timing: fresh random inputs, the FP64 oracle,
//    NaN-poisoned outputs, every element compared (harness/prepare.hpp), spread over the
//    host's cores. A variant that fails is never timed.
// 2. Build the timers (graphs are captured and uploaded here; cold graphs get rotation sets
//    of at least 3x L2), then warm the GPU until its SM clock is steady.
// 3. Time in randomized visits (harness/units.hpp) and keep every raw sample.
// 4. Record: device, load before and after, warm-up, each timer's floor before preparation,
//    before and after the visits (a floor that moved is warned about), the manifest of the
//    measured sources, and how long preparation and timing took; then the experiment's own
//    analysis adds what it reports.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/l2_flush.hpp"
#include "harness/problem.hpp"
#include "harness/schedule.hpp"
#include "harness/units.hpp"
#include "record/result.hpp"

namespace kbench {

// A graph replay of about 2 ms: long against event resolution (~0.5 us) and the replay's own
// start, short enough that a visit stays a burst. (Here, not in runner.cpp: the dry run's
// estimate, harness/dry_run.hpp, counts the same launches.)
inline constexpr double kGraphTargetUs = 2000;
inline constexpr int kMinGraphLaunches = 4;
inline constexpr int kMaxGraphLaunches = 500;

// The launches one graph replays for a launch of about `launch_us`, rotating through `sets`
// buffer sets: about kGraphTargetUs of them within the bounds above, and a multiple of the
// set count, so that every set is launched equally often and a replay never starts on a set
// the previous one touched shortly before (what a count that is not a multiple did to 26 of
// 254 graph records of a rows run). Past the upper bound only when the sets alone need it.
inline int graph_launch_count(double launch_us, int sets) {
  int count = static_cast<int>(std::ceil(kGraphTargetUs / std::max(launch_us, 0.5)));
  count = std::clamp(count, kMinGraphLaunches, kMaxGraphLaunches);
  const int n = sets > 1 ? sets : 1;
  count = (count + n - 1) / n * n;
  if (count > kMaxGraphLaunches && n <= kMaxGraphLaunches) count = kMaxGraphLaunches / n * n;
  return count;
}

// Cold graph timing rotates input sets totalling at least this many times the L2's size (a
// graph cannot flush between its launches).
inline constexpr std::size_t kRotationL2Multiple = 3;

// The share of the warm clock below which a visit's samples are discarded (issue 17's default).
inline constexpr double kDefaultClockFloor = 0.9;

// One case and the variants to check and time on it.
struct MeasuredCase {
  const Problem* problem = nullptr;
  Case c;
  std::vector<const Launchable*> variants;
  std::vector<std::string> skipped;  // "variant: why" for selected variants that cannot run it
  // The rows whose outputs the check compares (PreparedCase::check_rows); empty: every row, or
  // the op's own sample (Problem::check_sample_rows). The oracle computes these rows alone where
  // the op allows it (Problem::oracle_rows, oracle_by_row), and every row otherwise, once per
  // case whatever its variants.
  std::vector<std::int64_t> check_rows = {};
  // The case's position in the whole plan, which seeds its inputs; empty: its position in
  // Experiment::cases. A shard's cases keep the whole plan's (harness/shard.hpp), so that a
  // case gets the same inputs in any shard as in the unsharded run.
  std::optional<std::size_t> plan_index = std::nullopt;
};

// How the cases are timed.
struct Measurement {
  std::vector<std::string> caches{"cold"};   // "cold" | "warm"
  std::vector<std::string> timers{"events"};  // "events" | "graph" | "cupti"
  int visits = 3;
  int samples = 3;  // per variant per visit
  std::uint64_t seed = 1;
  int device = 0;
  // A visit that begins with the SM clock below this share of the warm-up's clock has its
  // samples discarded, counted and taken again (harness/units.hpp ClockFilter); 0 turns the
  // check off.
  double clock_floor = kDefaultClockFloor;
  // More visits where the noise asks for them (harness/schedule.hpp); target 0: off.
  StoppingRule until = {};
};

struct Experiment {
  std::string name;                  // results go to results/<name>/
  std::vector<std::string> sources;  // path prefixes of its own code: measured with every op
  nlohmann::json settings = nlohmann::json::object();  // meta.settings: what shaped the run
  Measurement how;
  std::vector<MeasuredCase> cases;
  // What the experiment reports beyond the records, added to the finished result.
  std::function<void(Result&)> analyse;
  // For an experiment that times in its own way rather than in visits to cases (the probe:
  // samples after idle pauses). Called on the warm GPU after the visits (none, if it has no
  // cases), with the runner's stream; it appends its records to result.records and may add
  // blocks to result.extra. Its records' ops are measured with `sources` (and the harness),
  // and with their own_op_sources.
  std::function<void(cudaStream_t, Result&)> time_own;
  // The source prefixes of registered ops whose records time_own adds (Problem::sources, by op
  // name): the tolerance probe's shares come from those ops' kernels, so verify must hold its
  // records to them too. The runner cannot look them up: the registry is above it.
  std::map<std::string, std::vector<std::string>> own_op_sources = {};
  // Blocks added to the result's meta as they are (a shard's meta.shard, harness/shard.hpp).
  nlohmann::json meta = nlohmann::json::object();
  // For work that is not cases of registered ops (kbench from Python, src/python/: callables
  // that enqueue on their caller's stream, with buffers the caller owns, checked by the caller):
  // builds units of checked variants with their timers, on the run's stream and flusher, after
  // the first timer floors and before warm-up. They are visited, floored and recorded with the
  // cases' units; their ops' sources are own_op_sources'.
  std::function<std::vector<Unit>(cudaStream_t, const L2Flusher&)> build_units = {};
  // The stream everything runs on; empty: a stream of the runner's own. kbench from Python
  // passes its caller's current stream, the one its callables enqueue on.
  std::optional<cudaStream_t> stream = std::nullopt;
};

// Runs the experiment on how.device and returns the result (not yet written). Check failures
// are in extra.check_failures and their variants are not timed.
Result run_experiment(const Experiment& e, const std::vector<std::string>& argv);

// Prepares and checks every case, no timing: one line per variant and per skip, handed to `line`
// as each check ends (so that a check that hangs is the one after the last line); returns
// whether every check passed.
bool check_experiment(const Experiment& e, const std::function<void(const std::string&)>& line);

}  // namespace kbench
