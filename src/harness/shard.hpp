// Splitting a plan into shards (`--shard i/n` on run and grid), so that a plan too large for one
// GPU runs as n processes, on as many GPUs or hosts, whose results `kbench merge` joins.
//
// The plan is an Experiment's cases and how they are timed. Its hash (plan_sha256) names it, so
// that merge can tell shards of one plan from shards of another. Shard i of n holds the cases at
// positions [i*N/n, (i+1)*N/n) of the case list shuffled by the run's seed (Rng's own
// Fisher-Yates, the same order with any standard library): shuffled first, so that structure in
// the list (every large shape last, one op after another) does not line up with shards. The n
// shards are disjoint and together are the whole plan, for every n; where n exceeds the case
// count some shards are empty, and an empty shard still runs and writes a valid result without
// records, so that a job array of n tasks merges whatever n is.
//
// A case keeps its position in the whole plan (MeasuredCase::plan_index), which seeds its
// inputs: a case gets the same inputs in any shard of any n as in the unsharded run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/runner.hpp"

namespace kbench {

// The most shards a plan may be split into: far above any cluster's GPU count, low enough that
// "i/n" is a small number.
inline constexpr int kMaxShards = 100000;

struct ShardSpec {
  int index = 0;  // 0-based
  int count = 1;
};

// "i/n" with 0 <= i < n <= kMaxShards, both written as plain decimal digits; UsageError (one
// line naming the text) otherwise.
ShardSpec parse_shard(const std::string& text);
std::string shard_name(const ShardSpec& s);  // "i/n"

// The plan as canonical text (one line per field, then one per case: its op, dtype, shape,
// parameters as "%.17g", input kind, variants, checked rows), and its SHA-256 in hex. What the
// text holds is what changes a measurement; what does not (the device index, the config's path,
// its description) is left out, so that shards run on different GPUs or hosts share a hash.
std::string plan_text(const Experiment& e);
std::string plan_sha256(const Experiment& e);

// The positions in a plan of `cases` cases that shard s holds, ascending.
std::vector<std::size_t> shard_case_indices(std::size_t cases, const ShardSpec& s, std::uint64_t seed);

// The part of `whole` that shard s runs: its cases (each with its plan_index), and meta.shard
// for the result (docs/schema.md): index, count, the whole plan's hash and case count, the
// shard's case positions, and `command` (run or grid: what merge analyses the joined records
// with). Its analysis sees only its own records, and one it cannot make (a grid shard without a
// timed cell) is logged, not thrown: the shard's measurements are kept, merge analyses them.
Experiment shard_experiment(const Experiment& whole, const ShardSpec& s, const std::string& command);

}  // namespace kbench
