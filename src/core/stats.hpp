// Statistics over raw samples. Robust ones only: medians and quartiles, not means, because a
// single preempted sample can be many times the rest.
#pragma once

#include <cstdint>
#include <vector>

namespace kbench {

struct Summary {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  std::size_t count = 0;
};

// Quantile with linear interpolation between order statistics (type 7, as numpy's default).
double quantile(std::vector<double> values, double q);
Summary summarize(const std::vector<double>& samples);

// Paired comparison of two variants timed in the same visits: the ratio baseline/candidate of
// their per-visit medians (> 1: the candidate is faster), its median over visits, and an exact
// order-statistic interval of that median: [r_(k), r_(n+1-k)] of the n sorted ratios, with the
// largest k whose coverage 1 - 2 P(Binomial(n, 1/2) < k) is at least 95%, or k = 1 (the range)
// when no k reaches it, and that coverage stated: 75% at 3 visits, 93.75% at 5, 96.9% at 6.
// (A bootstrap of the median over few ratios can only land on order statistics too, and
// claimed 95% where it had 75-87.5%.) Assumes only that the per-visit ratios are independent
// draws with that median.
struct PairedRatio {
  double median = 0, lo = 0, hi = 0;
  double coverage = 0;  // the interval's probability of holding the median (paired); 0.95 nominal (two samples)
  std::size_t visits = 0;
};
PairedRatio paired_ratio(const std::vector<double>& baseline_samples,
                         const std::vector<int>& baseline_visits,
                         const std::vector<double>& candidate_samples,
                         const std::vector<int>& candidate_visits);

// The order-statistic interval's rank k (1-based, from each end) and its exact coverage for n
// values at the wanted coverage.
struct RankInterval {
  std::size_t k = 0;
  double coverage = 0;
};
RankInterval median_rank_interval(std::size_t n, double wanted = 0.95);

// Two samples with no visits in common (two runs): the ratio of their medians, numerator over
// denominator, and a percentile-bootstrap interval of it, each sample resampled on its own
// (visits = 0). Samples taken in one visit are not independent, and a bootstrap of a median
// over few samples is coarse, so the nominal 95% is an upper bound on the coverage.
PairedRatio sample_ratio(const std::vector<double>& numerator_samples,
                         const std::vector<double>& denominator_samples, std::uint64_t seed,
                         int resamples = 2000);

}  // namespace kbench
