#include "experiments/shard_merge.hpp"

#include <functional>

#include "core/errors.hpp"
#include "experiments/grid.hpp"
#include "experiments/sweep.hpp"

namespace kbench {

Result merge_and_analyse(const std::vector<ShardInput>& shards, MergeOptions options) {
  if (shards.empty()) throw UsageError("merge: no shard results given");
  const std::string command = shard_command(shards.front());
  std::function<void(Result&)> analyse;
  if (command == "run") {
    options.recomputed = {"/comparisons", "/launch_overhead"};
    analyse = sweep_analysis;
  } else if (command == "grid") {
    options.recomputed = {"/grid/analysis"};
    analyse = grid_reanalysis;
  } else {
    throw UsageError((shards.front().file.empty() ? std::string("a shard") : shards.front().file) + ": a shard of '" + command + "', which merge does not know (run, grid)");
  }
  Result merged = merge_shards(shards, options);
  if (!merged.records.empty()) analyse(merged);
  return merged;
}

}  // namespace kbench
