// The scale-out options of run and grid: --shard i/n (this process runs one shard of the plan,
// harness/shard.hpp) and --devices 0,1,... (this process runs one worker per device, each a
// shard, and merges them: cli/devices_run.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/shard.hpp"

namespace kbench {

struct ShardOptions {
  std::string shard;    // "i/n"; empty: the whole plan
  std::string devices;  // "0,1"; empty: this process runs on --device
};

std::shared_ptr<ShardOptions> add_shard_options(CLI::App* sub);

struct ShardRequest {
  std::optional<ShardSpec> shard;
  std::vector<int> devices;  // empty: no workers
};

// UsageError (one line) for a malformed --shard or --devices, and for --devices beside --shard
// or --device (each worker is a shard on its own device). `sub`: the subcommand, asked whether
// --device was given.
ShardRequest resolve_shard_options(const ShardOptions& o, const CLI::App& sub);

// The line a dry run (and a shard's log) opens with: "shard 1/4 of plan 3fa2c1d9e0b1 (12 cases):
// 3 cases, at plan positions 0, 5, 7".
std::string shard_summary(const Experiment& part);

}  // namespace kbench
