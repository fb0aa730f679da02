// Shard results made by hand, for the merge and worker tests: a plan of add cases (float32, one
// shape each), split as shard_case_indices splits it, each shard holding its cases' records (a
// vec16 and a cub baseline record each, three visits of one sample) as kbench run --shard would
// write them. Their manifest and git are the verify fixture's, so that a merged result of them
// verifies in its tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "cpu/verify_fixture.hpp"
#include "harness/shard.hpp"
#include "record/result.hpp"

namespace kbench::test {

inline constexpr const char* kPlanHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// Case c of the plan: add float32 at (c + 1) x 1024 elements.
inline std::vector<std::int64_t> case_shape(std::size_t c) { return {static_cast<std::int64_t>(c + 1) * 1024}; }

inline Record add_record(std::size_t c, const std::string& variant, double us) {
  Record rec;
  rec.op = "add";
  rec.variant = variant;
  rec.baseline = variant == "cub";
  rec.dtype = "float32";
  rec.shape = case_shape(c);
  rec.cache = "cold";
  rec.timer = "events";
  rec.samples_us = {us, us * 1.01, us * 0.99};
  rec.sample_visits = {0, 1, 2};
  const Summary s = summarize(rec.samples_us);
  rec.median_us = s.median;
  rec.q1_us = s.q1;
  rec.q3_us = s.q3;
  rec.min_us = s.min;
  rec.bytes = 12.0 * static_cast<double>(rec.shape[0]);
  rec.gbps = rec.bytes / (rec.median_us * 1e3);
  rec.check = {true, 0, 1e-6, ""};
  return rec;
}

// Shard `index` of `count` of a plan of `cases` add cases, with the verify fixture's sources.
inline Result synthetic_shard(int index, int count, std::size_t cases, const nlohmann::json& git) {
  Result r = add_result(kKernel, kHarness, git);
  const std::vector<std::size_t> mine = shard_case_indices(cases, {index, count}, 1);
  r.records.clear();
  for (const std::size_t c : mine) {
    r.records.push_back(add_record(c, "vec16", 10.0 + static_cast<double>(c)));
    r.records.push_back(add_record(c, "cub", 12.0 + static_cast<double>(c)));
  }
  const std::string k = std::to_string(index);
  r.meta["argv"] = {"kbench", "run", "--shard", std::to_string(index) + "/" + std::to_string(count)};
  r.meta["started"] = "2026-01-01T00:0" + k + ":00Z";
  r.meta["visits_started"] = "2026-01-01T00:0" + k + ":30Z";
  r.meta["finished"] = "2026-01-01T00:0" + k + ":50Z";
  r.meta["host"] = "node-" + k;
  r.meta["seed"] = 1;
  r.meta["settings"] = {{"visits", 3}, {"device", 0}};
  r.meta["seconds"] = {{"preparation", 1.0}, {"timing", 2.0}, {"total", 3.0}};
  r.meta["shard"] = {{"index", index}, {"count", count}, {"command", "run"}, {"plan_sha256", kPlanHash},
                     {"plan_cases", cases}, {"cases", mine}};
  r.device = {{"name", "NVIDIA H200"}, {"cc", "9.0"}, {"sms", 132}, {"l2_bytes", 52428800},
              {"memory_bytes", 150000000000LL}, {"uuid", "GPU-0000000" + k}, {"pci_bus_id", "0000:0" + k + ":00.0"},
              {"driver", "13.0"}, {"cuda_runtime", "13.0"}, {"cublas", "13.0.0"}};
  r.warmup = {{"ms", 200 + index}, {"sm_clock_mhz", 1980}};
  r.load = {{"before", {{"gpus", {{{"utilization_pct", index}}}}}},
            {"after", {{"gpus", {{{"utilization_pct", 0}}}}}},
            {"warnings", nlohmann::json::array({"load " + k})}};
  r.extra = {{"timer_floor", {{{"cache", "cold"}, {"timer", "events"}, {"median_us", 2.9 + 0.01 * index}}}},
             {"check_failures", nlohmann::json::array()},
             {"skipped", {"add float32 case " + k + " scalar: not this one"}},
             {"comparisons", {{{"shard", index}}}}};
  return r;
}

inline nlohmann::json fixed_git() { return {{"commit", std::string(40, 'a')}, {"dirty", false}, {"source", "git"}}; }

}  // namespace kbench::test
