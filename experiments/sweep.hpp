// The sweep behind `kbench run` and `kbench check`: the cases of a config (experiments/
// sweep_config.hpp) expanded against the registry and handed to the experiment runner
// (harness/runner.hpp), which prepares, checks and times them. What the sweep adds is its
// report: each record's fraction of the run's copy bandwidth, paired per-visit speed-ups over
// each baseline (extra.comparisons) and the launch overhead, events minus graph
// (extra.launch_overhead).
#pragma once

#include "experiments/sweep_config.hpp"
#include "harness/runner.hpp"

namespace kbench {

// Validates op names, variant names and shape ranks (UsageError on any problem) and adds the
// copy roofline when asked and missing.
Experiment sweep_experiment(const SweepSettings& s);

// The sweep's report on a result's records: each record's copy fraction and same-traffic
// roofline, extra.comparisons and extra.launch_overhead. Run after the visits, and again by
// kbench merge over the joined records of a sweep's shards (experiments/shard_merge.hpp).
void sweep_analysis(Result& r);

}  // namespace kbench
