// Joining the results of a plan's shards (`--shard i/n`, harness/shard.hpp) into one result:
// what `kbench merge` and `kbench run --devices` do with their shards' files. Pure, no GPU: the
// CPU tests feed it results made by hand.
//
// Refused always (UsageError, one line): a result that is not a shard's (no meta.shard), shards
// of different experiments or commands, the same shard twice, and a record (op, variant, dtype,
// shape, parameters, cache, timer) in two files. Refused unless allowed (MergeOptions): shards of
// different plans (hash or count), sources (manifest files), commits (meta.git), GPU models
// (name, compute capability, SMs, L2, memory) or GPU software (driver, runtime, cuBLAS); and
// shards missing from the plan's n. What was allowed is recorded (meta.merge.allowed, .missing).
//
// The joined result is a normal schema v1 result (docs/schema.md, "Merged results"): its
// records in shard order; meta.shards lists each shard (file, GPU UUID, host, started,
// finished, warm-up, load); device, warmup and load.before/after are the first shard's (device
// without uuid and pci_bus_id when the shards ran on more than one GPU), load.warnings every
// shard's; the manifest's measured files are the union of the shards'. Extra blocks equal in
// every shard are kept; check_failures and skipped are joined; blocks that differ per shard
// (timer floors, the clock filter) go to extra.shards. The analysis of the joined records is
// the caller's (experiments/shard_merge.hpp): extra blocks it recomputes are named in
// MergeOptions::recomputed and left out.
#pragma once

#include <string>
#include <vector>

#include "record/result.hpp"

namespace kbench {

struct ShardInput {
  std::string file;  // as given (meta.shards[].file, and messages); empty: not from a file
  Result result;
};

struct MergeOptions {
  bool allow_mismatch = false;  // different plans, sources, commits, GPU models or software
  bool allow_missing = false;   // fewer shards than the plan's count
  // JSON pointers into extra ("/comparisons", "/grid/analysis") that the caller recomputes over
  // the joined records: removed from every shard's extra before the blocks are compared.
  std::vector<std::string> recomputed;
};

// The shard's meta.shard.command ("run", "grid"); UsageError naming the file when the result is
// not a shard's.
std::string shard_command(const ShardInput& in);

// The joined result (meta.argv left as the first shard's; the caller sets its own).
Result merge_shards(const std::vector<ShardInput>& shards, const MergeOptions& options);

}  // namespace kbench
