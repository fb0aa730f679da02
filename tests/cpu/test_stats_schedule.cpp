// Statistics and the randomized visit schedule.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "harness/schedule.hpp"
#include "core/stats.hpp"

namespace kbench {
namespace {

TEST(Stats, QuartilesInterpolateLikeNumpy) {
  // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) == [1.75, 2.5, 3.25]
  const Summary s = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_EQ(s.count, 4u);
}

TEST(Stats, OneSampleAndOddCounts) {
  EXPECT_DOUBLE_EQ(summarize({7}).median, 7);
  EXPECT_DOUBLE_EQ(summarize({5, 1, 9}).median, 5);
  EXPECT_THROW(summarize({}), std::invalid_argument);
}

TEST(Stats, MedianIgnoresOneHugeOutlier) {
  EXPECT_DOUBLE_EQ(summarize({10, 10, 10, 10, 1000}).median, 10);
}

TEST(Stats, PairedRatioOfACandidateTwiceAsFast) {
  const std::vector<double> base{10, 10.2, 20, 20.4, 12, 12};
  const std::vector<double> cand{5, 5.1, 10, 10.2, 6, 6};
  const std::vector<int> visits{0, 0, 1, 1, 2, 2};
  const PairedRatio r = paired_ratio(base, visits, cand, visits, 1);
  EXPECT_EQ(r.visits, 3u);
  EXPECT_NEAR(r.median, 2.0, 1e-12);
  EXPECT_NEAR(r.lo, 2.0, 1e-12);
  EXPECT_NEAR(r.hi, 2.0, 1e-12);
}

TEST(Stats, PairedRatioIntervalWidensWithNoise) {
  const std::vector<double> base{10, 10, 10, 10, 10, 10};
  const std::vector<double> cand{4, 5, 6, 5.5, 4.5, 6.5};
  const std::vector<int> visits{0, 1, 2, 3, 4, 5};
  const PairedRatio r = paired_ratio(base, visits, cand, visits, 3);
  EXPECT_LT(r.lo, r.median);
  EXPECT_GT(r.hi, r.median);
}

TEST(Schedule, EveryUnitVisitedExactlyVisitsTimes) {
  const std::vector<std::size_t> variants{3, 1, 4, 2};
  const auto order = visit_order(variants, 5, 99);
  ASSERT_EQ(order.size(), 4u * 5u);
  std::map<std::size_t, std::vector<int>> numbers;
  for (const auto& v : order) {
    numbers[v.unit].push_back(v.number);
    // Each visit runs every variant of its unit exactly once, back to back.
    std::set<std::size_t> seen(v.variant_order.begin(), v.variant_order.end());
    EXPECT_EQ(v.variant_order.size(), variants[v.unit]);
    EXPECT_EQ(seen.size(), variants[v.unit]);
    EXPECT_LT(*seen.rbegin(), variants[v.unit]);
  }
  for (const auto& [unit, nums] : numbers) EXPECT_EQ(nums, (std::vector<int>{0, 1, 2, 3, 4}));
}

bool same_order(const std::vector<Visit>& a, const std::vector<Visit>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].unit != b[i].unit || a[i].variant_order != b[i].variant_order) return false;
  return true;
}

TEST(Schedule, SameSeedSameOrderOtherSeedOtherOrder) {
  const std::vector<std::size_t> variants(12, 3);
  EXPECT_TRUE(same_order(visit_order(variants, 3, 1), visit_order(variants, 3, 1)));
  EXPECT_FALSE(same_order(visit_order(variants, 3, 1), visit_order(variants, 3, 2)));
}

TEST(Schedule, OrderIsShuffledNotSequential) {
  const auto order = visit_order(std::vector<std::size_t>(20, 2), 3, 5);
  bool sequential = true;
  for (std::size_t i = 1; i < order.size(); ++i) sequential = sequential && order[i].unit >= order[i - 1].unit;
  EXPECT_FALSE(sequential);
}

}  // namespace
}  // namespace kbench
