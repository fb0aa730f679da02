#include "kernels/common/input_kinds.hpp"

#include <cstddef>
#include <numeric>

namespace kbench {

void fill_uniform(HostTensor& t, Rng& rng, double lo, double hi) {
  for (auto& v : t.values) v = rng.uniform(lo, hi);
}

void fill_constant_rows(HostTensor& t, Rng& rng, double lo, double hi) {
  const auto cols = static_cast<std::size_t>(t.desc.cols);
  for (std::size_t start = 0; start < t.values.size(); start += cols) {
    const double v = rng.uniform(lo, hi);
    for (std::size_t k = 0; k < cols; ++k) t.values[start + k] = v;
  }
}

void fill_cancelling_rows(HostTensor& t, Rng& rng, double scale, double noise) {
  const auto cols = static_cast<std::size_t>(t.desc.cols);
  std::vector<double> row(cols);
  std::vector<std::size_t> place(cols);
  for (std::size_t start = 0; start < t.values.size(); start += cols) {
    for (std::size_t k = 0; k + 1 < cols; k += 2) {
      row[k] = rng.uniform(-scale, scale);
      row[k + 1] = -row[k] + rng.uniform(-noise, noise);
    }
    if (cols % 2 == 1) row[cols - 1] = rng.uniform(-noise, noise);
    std::iota(place.begin(), place.end(), std::size_t{0});
    rng.shuffle(place);
    for (std::size_t k = 0; k < cols; ++k) t.values[start + place[k]] = row[k];
  }
}

void add_spike_per_row(HostTensor& t, Rng& rng, double lo, double hi, double spike) {
  fill_uniform(t, rng, lo, hi);
  const auto cols = static_cast<std::size_t>(t.desc.cols);
  if (cols == 0) return;
  for (std::size_t start = 0; start < t.values.size(); start += cols) t.values[start + rng.below(cols)] = spike;
}

}  // namespace kbench
