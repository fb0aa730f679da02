// Plan splitting (harness/shard.hpp): shard i of n is a slice of the seeded shuffle of the
// cases; the n shards are disjoint and together the whole plan for every n, empty ones
// included; the plan's hash changes with what is measured and with nothing else; and a
// shard's experiment carries its cases' plan positions and meta.shard.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "experiments/sweep.hpp"
#include "harness/shard.hpp"

namespace kbench {
namespace {

// A sweep of 2 ops x 2 dtypes x 3 shapes (12 cases) and its copy and stream rooflines.
SweepSettings small_sweep() {
  SweepSettings s;
  s.cases = {CaseSpec{"add", {DType::f32, DType::f16}, {{1000}, {4096}, {1 << 20}}, {}},
             CaseSpec{"softmax", {DType::f32, DType::bf16}, {{4, 1000}, {32, 4096}, {1, 8192}}, {}}};
  return s;
}

TEST(Shard, ParsesIOfN) {
  const ShardSpec s = parse_shard("3/8");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(shard_name(s), "3/8");
  EXPECT_EQ(parse_shard("0/1").count, 1);
  EXPECT_EQ(parse_shard("99999/100000").index, 99999);
  int refused = 0;
  for (const char* bad : {"3/2", "2/2", "0/0", "a/b", "1", "", "/", "1/", "/2", "-1/2", "+1/2", " 1/2", "1/2 ", "1.0/2",
                          "1/2/3", "0x1/2", "0/100001", "0/99999999999999999999"}) {
    EXPECT_THROW(parse_shard(bad), UsageError) << bad;
    ++refused;
  }
  EXPECT_EQ(refused, 18);
}

// For every n from 1 to two past the case count, the shards are disjoint, cover the plan,
// differ in size by at most one and are sorted; n above the count leaves some empty.
TEST(Shard, ShardsAreDisjointAndCompleteForEveryCount) {
  int splits = 0;
  for (const std::size_t cases : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{31}}) {
    for (int n = 1; n <= static_cast<int>(cases) + 2; ++n) {
      std::vector<int> seen(cases, 0);
      std::size_t smallest = cases + 1, largest = 0, empty = 0;
      for (int i = 0; i < n; ++i) {
        const auto mine = shard_case_indices(cases, {i, n}, 42);
        EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
        for (const std::size_t c : mine) {
          ASSERT_LT(c, cases);
          ++seen[c];
        }
        smallest = std::min(smallest, mine.size());
        largest = std::max(largest, mine.size());
        empty += mine.empty();
      }
      for (std::size_t c = 0; c < cases; ++c) EXPECT_EQ(seen[c], 1) << "case " << c << " of " << cases << ", n " << n;
      EXPECT_LE(largest - smallest, 1u) << cases << " cases, n " << n;
      EXPECT_EQ(empty, n > static_cast<int>(cases) ? static_cast<std::size_t>(n) - cases : 0u);
      ++splits;
    }
  }
  EXPECT_EQ(splits, 2 + 3 + 9 + 33);
}

// The split depends on the seed and is the same on every call; shuffled, so that shard 0 of 2
// is not the first half of the list.
TEST(Shard, TheSplitIsSeededAndShuffled) {
  const auto a = shard_case_indices(100, {0, 2}, 1);
  EXPECT_EQ(a, shard_case_indices(100, {0, 2}, 1));
  EXPECT_NE(a, shard_case_indices(100, {0, 2}, 2));
  std::vector<std::size_t> first_half(50);
  for (std::size_t i = 0; i < 50; ++i) first_half[i] = i;
  EXPECT_NE(a, first_half);
  // Not the visit order's stream either: the seed is salted (shard.cpp kShardSalt).
  EXPECT_GT(std::count_if(a.begin(), a.end(), [](std::size_t c) { return c >= 50; }), 10);
}

TEST(Shard, PlanHashChangesWithWhatIsMeasuredOnly) {
  const SweepSettings base = small_sweep();
  const std::string h = plan_sha256(sweep_experiment(base));
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, plan_sha256(sweep_experiment(base)));
  SweepSettings other_device = base, other_path = base;
  other_device.device = 3;
  other_path.config_path = "/somewhere/else.json";
  other_path.description = "another description";
  EXPECT_EQ(h, plan_sha256(sweep_experiment(other_device)));
  EXPECT_EQ(h, plan_sha256(sweep_experiment(other_path)));
  int changed = 0;
  const auto differs = [&](SweepSettings s, const char* what) {
    EXPECT_NE(h, plan_sha256(sweep_experiment(s))) << what;
    ++changed;
  };
  SweepSettings s = base;
  s.seed = 2;
  differs(s, "seed");
  s = base;
  s.visits = 4;
  differs(s, "visits");
  s = base;
  s.samples = 4;
  differs(s, "samples");
  s = base;
  s.caches = {"warm"};
  differs(s, "cache");
  s = base;
  s.timers = {"graph"};
  differs(s, "timer");
  s = base;
  s.cases[0].shapes.pop_back();
  differs(s, "a shape fewer");
  s = base;
  s.cases[0].variants = {"vec16"};
  differs(s, "another variant list");
  s = base;
  s.roofline = false;
  differs(s, "no rooflines");
  s = base;
  s.clock_floor = 0.8;
  differs(s, "clock floor");
  s = base;
  s.experiment = "other";
  differs(s, "experiment name");
  EXPECT_EQ(changed, 10);
}

TEST(Shard, AShardKeepsItsCasesPlanPositionsAndNamesThePlan) {
  const Experiment whole = sweep_experiment(small_sweep());
  ASSERT_GE(whole.cases.size(), 12u);
  const std::string hash = plan_sha256(whole);
  std::set<std::string> labels;
  for (int i = 0; i < 3; ++i) {
    const Experiment part = shard_experiment(whole, {i, 3}, "run");
    const auto mine = shard_case_indices(whole.cases.size(), {i, 3}, whole.how.seed);
    ASSERT_EQ(part.cases.size(), mine.size());
    for (std::size_t k = 0; k < mine.size(); ++k) {
      ASSERT_TRUE(part.cases[k].plan_index.has_value());
      EXPECT_EQ(*part.cases[k].plan_index, mine[k]);
      EXPECT_EQ(case_label(part.cases[k].c), case_label(whole.cases[mine[k]].c));
      labels.insert(case_label(part.cases[k].c));
    }
    const nlohmann::json& m = part.meta.at("shard");
    EXPECT_EQ(m.at("index"), i);
    EXPECT_EQ(m.at("count"), 3);
    EXPECT_EQ(m.at("command"), "run");
    EXPECT_EQ(m.at("plan_sha256"), hash);
    EXPECT_EQ(m.at("plan_cases"), whole.cases.size());
    EXPECT_EQ(m.at("cases").get<std::vector<std::size_t>>(), mine);
    EXPECT_TRUE(static_cast<bool>(part.analyse));
  }
  EXPECT_EQ(labels.size(), whole.cases.size());
  // An empty shard (of N+1 shards of N cases, the first holds none): still named, and its
  // analysis of no records runs.
  const Experiment none = shard_experiment(whole, {0, static_cast<int>(whole.cases.size()) + 1}, "run");
  EXPECT_TRUE(none.cases.empty());
  EXPECT_EQ(none.meta.at("shard").at("cases").size(), 0u);
  Result empty;
  none.analyse(empty);
  EXPECT_TRUE(empty.extra.at("comparisons").empty());
}

// A shard's analysis that cannot be made (a grid shard without a timed cell) is logged, and the
// result keeps what was measured.
TEST(Shard, AnAnalysisThatFailsDoesNotLoseTheShard) {
  Experiment whole;
  whole.analyse = [](Result& r) {
    r.extra["grid"] = {{"cells", 0}};
    throw UsageError("grid result of 'softmax' has no cells with a timed plan");
  };
  const Experiment part = shard_experiment(whole, {0, 2}, "grid");
  Result r;
  EXPECT_NO_THROW(part.analyse(r));
  EXPECT_TRUE(r.extra.contains("grid"));
}

}  // namespace
}  // namespace kbench
