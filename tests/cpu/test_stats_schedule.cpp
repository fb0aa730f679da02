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
  const PairedRatio r = paired_ratio(base, visits, cand, visits);
  EXPECT_EQ(r.visits, 3u);
  EXPECT_NEAR(r.median, 2.0, 1e-12);
  EXPECT_NEAR(r.lo, 2.0, 1e-12);
  EXPECT_NEAR(r.hi, 2.0, 1e-12);
}

TEST(Stats, PairedRatioIntervalWidensWithNoise) {
  const std::vector<double> base{10, 10, 10, 10, 10, 10};
  const std::vector<double> cand{4, 5, 6, 5.5, 4.5, 6.5};
  const std::vector<int> visits{0, 1, 2, 3, 4, 5};
  const PairedRatio r = paired_ratio(base, visits, cand, visits);
  EXPECT_LT(r.lo, r.median);
  EXPECT_GT(r.hi, r.median);
}

// The order-statistic interval's coverage is exact: with n ratios, [r_(k), r_(n+1-k)] holds the
// median unless k or more fall on one side, 2 P(Binomial(n, 1/2) <= k - 1).
TEST(Stats, MedianIntervalStatesItsExactCoverage) {
  EXPECT_EQ(median_rank_interval(3).k, 1u);
  EXPECT_DOUBLE_EQ(median_rank_interval(3).coverage, 0.75);     // the range of 3: 1 - 2/8
  EXPECT_DOUBLE_EQ(median_rank_interval(5).coverage, 0.9375);   // 1 - 2/32: still below 95%
  EXPECT_DOUBLE_EQ(median_rank_interval(6).coverage, 0.96875);  // 1 - 2/64: the first n above
  EXPECT_EQ(median_rank_interval(6).k, 1u);
  // n = 9: k = 2 covers 1 - 2 (1 + 9)/512 = 0.9609; k = 3 would cover 1 - 2 (1 + 9 + 36)/512 = 0.8203.
  EXPECT_EQ(median_rank_interval(9).k, 2u);
  EXPECT_NEAR(median_rank_interval(9).coverage, 1 - 2.0 * 10 / 512, 1e-15);
  // Larger n: the coverage stays at least 95% and k grows about as n/2 - sqrt(n).
  for (std::size_t n = 6; n <= 200; ++n) {
    const RankInterval r = median_rank_interval(n);
    EXPECT_GE(r.coverage, 0.95) << n;
    EXPECT_LE(2 * r.k, n) << n;
  }
  EXPECT_EQ(median_rank_interval(100).k, 40u);  // P(B(100, 1/2) <= 39) = 0.0176; <= 40: 0.0284
  EXPECT_EQ(median_rank_interval(1).coverage, 0);
}

TEST(Stats, PairedRatioIntervalIsTheStatedOrderStatistics) {
  const std::vector<double> base(7, 10.0);
  const std::vector<double> cand{4, 5, 6, 5.5, 4.5, 6.5, 5.25};  // ratios 2.5 2 1.67 1.82 2.22 1.54 1.90
  const std::vector<int> visits{0, 1, 2, 3, 4, 5, 6};
  const PairedRatio r = paired_ratio(base, visits, cand, visits);
  EXPECT_EQ(r.visits, 7u);
  EXPECT_DOUBLE_EQ(r.lo, 10.0 / 6.5);  // k = 1 at n = 7: the range, coverage 1 - 2/128
  EXPECT_DOUBLE_EQ(r.hi, 10.0 / 4);
  EXPECT_DOUBLE_EQ(r.coverage, 1 - 2.0 / 128);
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
