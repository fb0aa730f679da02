#include "harness/shard.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "core/errors.hpp"
#include "core/rng.hpp"
#include "core/text.hpp"
#include "record/sha256.hpp"

namespace kbench {

namespace {

// Mixed into the seed for the shard split, so that the case order it shuffles is not the
// visit order's stream (harness/schedule.cpp seeds Rng with the seed itself).
constexpr std::uint64_t kShardSalt = 0x5ba7d5c0ffee0001ULL;

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

template <class T, class F>
std::string joined(const std::vector<T>& values, F format) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + format(values[i]);
  return out;
}

}  // namespace

ShardSpec parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const std::string i = slash == std::string::npos ? "" : text.substr(0, slash);
  const std::string n = slash == std::string::npos ? "" : text.substr(slash + 1);
  const auto count = all_digits(n) ? parse_whole(n, 1, kMaxShards) : std::nullopt;
  const auto index = all_digits(i) && count ? parse_whole(i, 0, *count - 1) : std::nullopt;
  if (!count || !index)
    throw UsageError("--shard expects i/n, shard i (0 to n-1) of n (1 to " + std::to_string(kMaxShards) + "), got '" +
                     text + "'");
  return {static_cast<int>(*index), static_cast<int>(*count)};
}

std::string shard_name(const ShardSpec& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

std::string plan_text(const Experiment& e) {
  const Measurement& how = e.how;
  const auto str = [](const std::string& s) { return s; };
  const auto integer = [](auto v) { return std::to_string(v); };
  std::string t = "kbench plan v1\n";
  t += "experiment " + e.name + "\n";
  t += "caches " + joined(how.caches, str) + "\n";
  t += "timers " + joined(how.timers, str) + "\n";
  t += "visits " + std::to_string(how.visits) + "\nsamples " + std::to_string(how.samples) + "\n";
  t += "seed " + std::to_string(how.seed) + "\n";
  t += "clock_floor " + exact(how.clock_floor) + "\n";
  t += "until " + exact(how.until.target) + "," + std::to_string(how.until.max_visits) + "," +
       exact(how.until.min_seconds) + "\n";
  t += "cases " + std::to_string(e.cases.size()) + "\n";
  for (const MeasuredCase& mc : e.cases) {
    const Case& c = mc.c;
    std::string params;
    for (const auto& [name, value] : c.params) params += (params.empty() ? "" : ",") + name + "=" + exact(value);
    std::vector<std::string> variants;
    for (const Launchable* v : mc.variants) variants.push_back(v->name);
    t += "case " + c.op + "\t" + std::string(dtype_name(c.dtype)) + "\t" + joined(c.shape, integer) + "\t" +
         std::to_string(c.row_stride) + "\t" + params + "\t" + std::string(input_kind_name(c.input_kind)) + "\t" +
         joined(variants, str) + "\t" + joined(mc.check_rows, integer) + "\n";
  }
  return t;
}

std::string plan_sha256(const Experiment& e) { return sha256_hex(plan_text(e)); }

std::vector<std::size_t> shard_case_indices(std::size_t cases, const ShardSpec& s, std::uint64_t seed) {
  std::vector<std::size_t> order(cases);
  std::iota(order.begin(), order.end(), std::size_t{0});
  Rng rng(seed ^ kShardSalt);
  rng.shuffle(order);
  const auto n = static_cast<std::size_t>(s.count), i = static_cast<std::size_t>(s.index);
  // i*N/n without overflow for any N a plan can hold (N < 2^32 cases, n <= kMaxShards).
  const std::size_t begin = i * cases / n, end = (i + 1) * cases / n;
  std::vector<std::size_t> mine(order.begin() + static_cast<std::ptrdiff_t>(begin),
                                order.begin() + static_cast<std::ptrdiff_t>(end));
  std::sort(mine.begin(), mine.end());
  return mine;
}

Experiment shard_experiment(const Experiment& whole, const ShardSpec& s, const std::string& command) {
  Experiment part = whole;
  const std::vector<std::size_t> mine = shard_case_indices(whole.cases.size(), s, whole.how.seed);
  part.cases.clear();
  for (const std::size_t i : mine) {
    part.cases.push_back(whole.cases[i]);
    part.cases.back().plan_index = i;
  }
  part.meta["shard"] = {{"index", s.index},
                        {"count", s.count},
                        {"command", command},
                        {"plan_sha256", plan_sha256(whole)},
                        {"plan_cases", whole.cases.size()},
                        {"cases", mine}};
  // A shard's own analysis sees only its records: a grid shard without a timed cell has none to
  // give, and must not lose its result for that. Merge analyses the joined records.
  if (whole.analyse)
    part.analyse = [analyse = whole.analyse, name = shard_name(s)](Result& r) {
      try {
        analyse(r);
      } catch (const UsageError& e) {
        spdlog::warn("shard {}: no analysis of its own records ({}); kbench merge analyses the joined shards", name,
                     e.what());
      }
    };
  return part;
}

}  // namespace kbench
