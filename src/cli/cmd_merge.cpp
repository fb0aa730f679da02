// kbench merge A.json B.json ...: the results of a plan's shards (run or grid --shard i/n) joined
// into one result (experiments/shard_merge.hpp), written to <out>/<experiment>/. Shards that do
// not make one plan are refused with one line and nothing is written, unless allowed.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "experiments/shard_merge.hpp"

namespace kbench {

void add_merge_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> files;
    std::string out = "results";
    bool allow_mismatch = false, allow_missing = false;
  };
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "merge", "Join the results of a plan's shards (run or grid with --shard i/n) into one result; refuses shards "
               "that overlap, are missing, or differ in plan, sources, commit or GPU model");
  sub->add_option("files", o->files, "The shards' result files (schema v1, each with meta.shard)")->required();
  sub->add_option("--out", o->out, "Results root; the merged file goes to <out>/<experiment>/");
  sub->add_flag("--allow-mismatch", o->allow_mismatch,
                "Merge shards of different plans, sources, commits, GPU models or GPU software (recorded in "
                "meta.merge.allowed)");
  sub->add_flag("--allow-missing", o->allow_missing,
                "Merge fewer shards than the plan has (the missing ones are named in meta.merge.missing)");
  sub->callback([o] {
    if (o->files.size() < 2)
      throw UsageError("merge needs the results of at least two shards, got " + std::to_string(o->files.size()));
    std::vector<ShardInput> shards;
    for (const auto& file : o->files) {
      for (const auto& earlier : shards) {
        std::error_code ec;
        if (earlier.file == file || std::filesystem::equivalent(earlier.file, file, ec))
          throw UsageError(file + " is given twice");
      }
      shards.push_back({file, read_result(file)});
    }
    MergeOptions options;
    options.allow_mismatch = o->allow_mismatch;
    options.allow_missing = o->allow_missing;
    Result merged = merge_and_analyse(shards, options);  // throws before anything is written
    merged.meta["argv"] = process_argv();
    const auto dir = std::filesystem::path(o->out) / merged.experiment;
    require_result_dir(dir);
    const auto path = write_result(merged, dir);
    const auto& m = merged.meta.at("merge");
    std::printf("merged %zu shard(s) of %d (plan %s): %zu records\n", merged.meta.at("shards").size(),
                m.at("count").get<int>(), m.at("plan_sha256").get<std::string>().substr(0, 12).c_str(),
                merged.records.size());
    for (const auto& line : m.at("allowed")) spdlog::warn("allowed: {}", line.get<std::string>());
    if (!m.at("missing").empty()) spdlog::warn("missing shard(s): {}", m.at("missing").dump());
    spdlog::info("wrote {}", path.string());
  });
}

}  // namespace kbench
