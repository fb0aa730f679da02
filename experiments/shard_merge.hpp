// Joining a plan's shards into the result an unsharded run would have written: record/merge.hpp
// joins them, then the analysis of the command that made them (meta.shard.command: run's
// sweep_analysis, grid's grid_reanalysis) runs over the joined records, so that copy fractions,
// rooflines, comparisons and the grid's regret are the whole plan's, as one run's would be.
// What `kbench merge` and `kbench run --devices` both call.
#pragma once

#include <vector>

#include "record/merge.hpp"

namespace kbench {

// UsageError (one line, nothing joined) for shards merge refuses, or of a command it cannot
// analyse; options.recomputed is filled in here.
Result merge_and_analyse(const std::vector<ShardInput>& shards, MergeOptions options);

}  // namespace kbench
