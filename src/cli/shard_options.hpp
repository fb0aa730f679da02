// The scale-out options of run and grid: --shard i/n (this process runs one shard of the plan,
// harness/shard.hpp) and --devices 0,1,... (this process runs one worker per device, each a
// shard, and merges them: cli/devices_run.hpp), --isolate (the whole plan in one worker process
// on --device, so that a variant that faults is recorded and the run goes on: cli/workers.hpp)
// and --unit-timeout (the workers' step deadline).
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
  bool isolate = false;
  std::string unit_timeout;  // seconds; empty: the default
};

std::shared_ptr<ShardOptions> add_shard_options(CLI::App* sub);

struct ShardRequest {
  std::optional<ShardSpec> shard;
  std::vector<int> devices;  // empty: no workers; with --isolate, --device alone
  double step_timeout_s = 0;  // --unit-timeout; 0: the default
};

// UsageError (one line) for a malformed --shard, --devices or --unit-timeout, for --devices
// beside --shard or --device (each worker is a shard on its own device), --isolate beside
// --devices (which isolates already) or --shard, and --unit-timeout without workers. `sub`: the
// subcommand, asked which options were given; `device`: its --device, where --isolate runs.
ShardRequest resolve_shard_options(const ShardOptions& o, const CLI::App& sub, int device);

// The line a dry run (and a shard's log) opens with: "shard 1/4 of plan 3fa2c1d9e0b1 (12 cases):
// 3 cases, at plan positions 0, 5, 7".
std::string shard_summary(const Experiment& part);

}  // namespace kbench
