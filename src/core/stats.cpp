#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "core/rng.hpp"

namespace kbench {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile of no samples");
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

Summary summarize(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("summary of no samples");
  Summary s;
  s.count = samples.size();
  s.median = quantile(samples, 0.5);
  s.q1 = quantile(samples, 0.25);
  s.q3 = quantile(samples, 0.75);
  const auto [mn, mx] = std::minmax_element(samples.begin(), samples.end());
  s.min = *mn;
  s.max = *mx;
  return s;
}

namespace {

std::map<int, std::vector<double>> by_visit(const std::vector<double>& samples,
                                            const std::vector<int>& visits) {
  if (samples.size() != visits.size()) throw std::invalid_argument("samples and visits differ in length");
  std::map<int, std::vector<double>> out;
  for (std::size_t i = 0; i < samples.size(); ++i) out[visits[i]].push_back(samples[i]);
  return out;
}

// The 2.5% and 97.5% percentiles of `resamples` draws of a statistic, each made by `draw` from
// one generator seeded by `seed` (the two-sample ratio's; the paired one has an exact interval).
template <class Draw>
std::pair<double, double> bootstrap_interval(std::uint64_t seed, int resamples, Draw draw) {
  Rng rng(seed);
  std::vector<double> stats(static_cast<std::size_t>(resamples));
  for (auto& s : stats) s = draw(rng);
  return {quantile(stats, 0.025), quantile(stats, 0.975)};
}

}  // namespace

RankInterval median_rank_interval(std::size_t n, double wanted) {
  RankInterval r;
  if (n == 0) return r;
  // P(Binomial(n, 1/2) <= j) for j = 0, 1, ... by the recurrence C(n, j+1) = C(n, j) (n-j)/(j+1).
  const double p0 = std::ldexp(1.0, -static_cast<int>(std::min<std::size_t>(n, 1074)));
  double term = p0, below = 0;  // below: P(B <= k - 1)
  r.k = 1;
  r.coverage = 1 - 2 * p0;
  for (std::size_t k = 1; 2 * k <= n; ++k) {
    below += term;  // P(B <= k - 1)
    const double coverage = 1 - 2 * below;
    if (coverage < wanted) break;
    r.k = k;
    r.coverage = coverage;
    term *= static_cast<double>(n - (k - 1)) / static_cast<double>(k);
  }
  if (n == 1) r.coverage = 0;  // one ratio: a point, no interval
  return r;
}

PairedRatio paired_ratio(const std::vector<double>& baseline_samples,
                         const std::vector<int>& baseline_visits,
                         const std::vector<double>& candidate_samples,
                         const std::vector<int>& candidate_visits) {
  const auto base = by_visit(baseline_samples, baseline_visits);
  const auto cand = by_visit(candidate_samples, candidate_visits);
  std::vector<double> ratios;
  for (const auto& [visit, b] : base) {
    const auto it = cand.find(visit);
    if (it == cand.end()) continue;
    ratios.push_back(quantile(b, 0.5) / quantile(it->second, 0.5));
  }
  PairedRatio r;
  r.visits = ratios.size();
  if (ratios.empty()) return r;
  r.median = quantile(ratios, 0.5);
  std::sort(ratios.begin(), ratios.end());
  const RankInterval ri = median_rank_interval(ratios.size());
  r.lo = ratios[ri.k - 1];
  r.hi = ratios[ratios.size() - ri.k];
  r.coverage = ri.coverage;
  return r;
}

PairedRatio sample_ratio(const std::vector<double>& numerator_samples,
                         const std::vector<double>& denominator_samples, std::uint64_t seed,
                         int resamples) {
  PairedRatio r;
  if (numerator_samples.empty() || denominator_samples.empty()) return r;
  r.median = quantile(numerator_samples, 0.5) / quantile(denominator_samples, 0.5);
  std::vector<double> num(numerator_samples.size()), den(denominator_samples.size());
  std::tie(r.lo, r.hi) = bootstrap_interval(seed, resamples, [&](Rng& rng) {
    for (auto& x : num) x = numerator_samples[rng.below(numerator_samples.size())];
    for (auto& x : den) x = denominator_samples[rng.below(denominator_samples.size())];
    return quantile(num, 0.5) / quantile(den, 0.5);
  });
  r.coverage = 0.95;  // nominal: see stats.hpp
  return r;
}

}  // namespace kbench
