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
// their per-visit medians (> 1: the candidate is faster), its median over visits, and a
// percentile-bootstrap interval of that median.
struct PairedRatio {
  double median = 0, lo = 0, hi = 0;  // lo/hi: the 2.5% and 97.5% bootstrap percentiles
  std::size_t visits = 0;
};
PairedRatio paired_ratio(const std::vector<double>& baseline_samples,
                         const std::vector<int>& baseline_visits,
                         const std::vector<double>& candidate_samples,
                         const std::vector<int>& candidate_visits, std::uint64_t seed,
                         int resamples = 2000);

// Two samples with no visits in common (two runs): the ratio of their medians, numerator over
// denominator, and a percentile-bootstrap interval of it, each sample resampled on its own
// (visits = 0). Samples taken in one visit are not independent, and a bootstrap of a median
// over few samples is coarse, so the nominal 95% is an upper bound on the coverage.
PairedRatio sample_ratio(const std::vector<double>& numerator_samples,
                         const std::vector<double>& denominator_samples, std::uint64_t seed,
                         int resamples = 2000);

}  // namespace kbench
