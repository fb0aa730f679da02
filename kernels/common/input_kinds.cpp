#include "kernels/common/input_kinds.hpp"

#include <cstddef>
#include <numeric>

namespace kbench {

namespace {

std::int64_t rows_in(const HostTensor& t) {
  return t.desc.cols ? static_cast<std::int64_t>(t.values.size()) / t.desc.cols : 0;
}

}  // namespace

void fill_uniform(HostTensor& t, Rng& rng, double lo, double hi) {
  fill_drawn(t.values, rng, [lo, hi](std::int64_t, Rng& g) { return g.uniform(lo, hi); });
}

void fill_constant_rows(HostTensor& t, Rng& rng, double lo, double hi) {
  const std::int64_t cols = t.desc.cols;
  double* const v = t.values.data();
  each_row_drawn(rows_in(t), cols, rng, [=](std::int64_t r, Rng& g) { std::fill_n(v + r * cols, cols, g.uniform(lo, hi)); });
}

void fill_cancelling_rows(HostTensor& t, Rng& rng, double scale, double noise) {
  const auto cols = static_cast<std::size_t>(t.desc.cols);
  double* const v = t.values.data();
  each_row_drawn(rows_in(t), t.desc.cols, rng, [=](std::int64_t r, Rng& g) {
    std::vector<double> row(cols);
    std::vector<std::size_t> place(cols);
    for (std::size_t k = 0; k + 1 < cols; k += 2) {
      row[k] = g.uniform(-scale, scale);
      row[k + 1] = -row[k] + g.uniform(-noise, noise);
    }
    if (cols % 2 == 1) row[cols - 1] = g.uniform(-noise, noise);
    std::iota(place.begin(), place.end(), std::size_t{0});
    g.shuffle(place);
    double* const out = v + static_cast<std::size_t>(r) * cols;
    for (std::size_t k = 0; k < cols; ++k) out[place[k]] = row[k];
  });
}

void add_spike_per_row(HostTensor& t, Rng& rng, double lo, double hi, double spike) {
  fill_uniform(t, rng, lo, hi);
  const std::int64_t cols = t.desc.cols;
  if (cols == 0) return;
  double* const v = t.values.data();
  each_row_drawn(rows_in(t), cols, rng, [=](std::int64_t r, Rng& g) {
    v[r * cols + static_cast<std::int64_t>(g.below(static_cast<std::uint64_t>(cols)))] = spike;
  });
}

}  // namespace kbench
