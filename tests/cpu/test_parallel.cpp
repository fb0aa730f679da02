// Host work split across cores (core/parallel.hpp) gives what the serial loops gave: every
// index once, the comparison's first failure and worst element, the conversions, the row
// oracles. Sizes are several pieces long, so the split paths run wherever the machine has more
// than one core (CI's has two).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/dtype.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "harness/compare.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

TEST(Parallel, PiecesCoverEveryIndexOnceInOrder) {
  for (const std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{999}, std::int64_t{1000},
                               std::int64_t{12345}, std::int64_t{1} << 20}) {
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
    std::vector<std::pair<std::int64_t, std::int64_t>> pieces;
    std::mutex m;
    parallel_pieces(n, 1000, [&](std::int64_t begin, std::int64_t end) {
      EXPECT_LT(begin, end);
      for (std::int64_t i = begin; i < end; ++i) seen[static_cast<std::size_t>(i)]++;
      const std::lock_guard<std::mutex> lock(m);
      pieces.emplace_back(begin, end);
    });
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)], 1) << "n=" << n << " i=" << i;
    std::sort(pieces.begin(), pieces.end());
    for (std::size_t p = 1; p < pieces.size(); ++p) EXPECT_EQ(pieces[p - 1].second, pieces[p].first);
    if (n <= 1000) {
      EXPECT_LE(pieces.size(), 1u);
    }
    EXPECT_LE(pieces.size(), std::max(1u, std::thread::hardware_concurrency()));
  }
}

TEST(Parallel, AnExceptionInAPieceReachesTheCaller) {
  EXPECT_THROW(parallel_pieces(1 << 20, 1000,
                               [](std::int64_t begin, std::int64_t end) {
                                 if (begin <= 700000 && 700000 < end) throw std::runtime_error("piece");
                               }),
               std::runtime_error);
}

// The scan check_variant did before the split, kept here as the reference.
Scan serial_scan(const std::vector<double>& got, const std::vector<double>& ref, const Tolerance& tol) {
  Scan s;
  for (std::size_t k = 0; k < got.size(); ++k) {
    const Element e = compare_element(got[k], ref[k], tol);
    if (!e.ok) {
      s.bad = static_cast<std::int64_t>(k);
      break;
    }
    if (e.finite && e.ratio() > s.worst_ratio) {
      s.worst_ratio = e.ratio();
      s.worst_at = static_cast<std::int64_t>(k);
    }
  }
  return s;
}

// Both entry points: doubles, and float32 bits read in place (the values are float32 here).
void expect_same_scan(const std::vector<double>& got, const std::vector<double>& ref, const Tolerance& tol) {
  const Scan want = serial_scan(got, ref, tol);
  std::vector<double> as_float = got;  // the callers' values are float32 values already
  const std::vector<std::byte> bits = encode(DType::f32, as_float);
  for (const Scan& have : {compare_output(got, ref, tol), compare_output(DType::f32, bits.data(), ref, tol)}) {
    EXPECT_EQ(have.bad, want.bad);
    EXPECT_EQ(have.worst_at, want.worst_at);
    EXPECT_EQ(have.worst_ratio, want.worst_ratio);
  }
}

TEST(Parallel, ComparisonFindsWhatTheSerialScanFinds) {
  const std::size_t n = 5 * kParallelGrain + 17;
  Rng rng(7);
  std::vector<double> ref(n), got(n);
  for (std::size_t k = 0; k < n; ++k) {
    ref[k] = rng.uniform(-1.0, 1.0);
    got[k] = static_cast<float>(ref[k] + rng.uniform(-1e-7, 1e-7));
  }
  ref[10] = NAN, got[10] = NAN;  // NaN expected and given: passes, never the worst
  ref[11] = INFINITY, got[11] = INFINITY;
  const Tolerance tol{2e-7, 0, "test"};
  expect_same_scan(got, ref, tol);  // all pass: the worst element over every piece

  got[n - 3] = static_cast<float>(ref[n - 3] + 1e-3);  // one failure in the last piece
  expect_same_scan(got, ref, tol);
  got[2 * kParallelGrain + 5] = NAN;  // an earlier failure in a middle piece wins
  expect_same_scan(got, ref, tol);
  got[3] = 0.5;  // and a failure in the first piece before both
  ref[3] = 0.0;
  expect_same_scan(got, ref, tol);
  EXPECT_EQ(compare_output(got, ref, tol).bad, 3);

  std::vector<double> ties(n, 1.0), exact(n, 1.0);
  ties[4 * kParallelGrain] = ties[kParallelGrain + 1] = 1.0 + std::ldexp(1.0, -23);  // equal ratios: the first
  expect_same_scan(ties, exact, tol);
  EXPECT_EQ(compare_output(ties, exact, tol).worst_at, kParallelGrain + 1);
}

TEST(Parallel, ConversionsMatchTheScalarOnes) {
  const std::size_t n = 3 * kParallelGrain + 5;
  Rng rng(3);
  std::vector<double> v(n);
  for (auto& x : v) x = rng.uniform(-70000.0, 70000.0) * std::pow(2.0, rng.uniform(-30.0, 0.0));
  for (const DType t : kAllDTypes) {
    std::vector<double> rounded = v;
    const std::vector<std::byte> bytes = encode(t, rounded);
    for (std::size_t k = 0; k < n; k += 997) {
      const float f = static_cast<float>(v[k]);
      const double want = t == DType::f32   ? f
                          : t == DType::f16 ? half_bits_to_float(float_to_half_bits(f))
                                            : bf16_bits_to_float(float_to_bf16_bits(f));
      ASSERT_EQ(rounded[k], want) << dtype_name(t) << " at " << k;
    }
    EXPECT_EQ(decode(t, bytes), rounded) << dtype_name(t);
  }
}

TEST(Parallel, RowOraclesMatchASerialComputation) {
  const std::int64_t rows = 257, cols = 1000;  // about 4 pieces of rows
  const Case c{"softmax", DType::f32, {rows, cols}};
  Rng rng(5);
  std::vector<double> x(static_cast<std::size_t>(rows * cols));
  for (auto& v : x) v = rng.uniform(-4.0, 4.0);

  const Op& softmax = registry().op("softmax");
  const auto y = softmax.oracle(c, {HostTensor{softmax.inputs(c)[0], x}})[0].values;
  const Op& row_sum = registry().op("row_sum");
  const Case cs{"row_sum", DType::f32, {rows, cols}};
  const auto sums = row_sum.oracle(cs, {HostTensor{row_sum.inputs(cs)[0], x}})[0].values;
  ASSERT_EQ(y.size(), x.size());
  ASSERT_EQ(sums.size(), static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* xr = &x[static_cast<std::size_t>(r * cols)];
    double m = -std::numeric_limits<double>::infinity(), sum = 0, plain = 0;
    for (std::int64_t k = 0; k < cols; ++k) m = std::max(m, xr[k]), plain += xr[k];
    for (std::int64_t k = 0; k < cols; ++k) sum += std::exp(xr[k] - m);
    EXPECT_NEAR(sums[static_cast<std::size_t>(r)], plain, 1e-12) << "row " << r;
    for (std::int64_t k = 0; k < cols; k += 37)
      ASSERT_DOUBLE_EQ(y[static_cast<std::size_t>(r * cols + k)], std::exp(xr[k] - m) / sum) << "row " << r;
  }

  const Op& backward = registry().op("softmax_backward");
  const Case cb{"softmax_backward", DType::f32, {rows, cols}};
  std::vector<double> dy(x.size());
  for (auto& v : dy) v = rng.uniform(-0.5, 1.5);
  const auto in = backward.inputs(cb);
  const auto dx = backward.oracle(cb, {HostTensor{in[0], y}, HostTensor{in[1], dy}})[0].values;
  ASSERT_EQ(dx.size(), x.size());
  for (std::int64_t r = 0; r < rows; r += 16) {
    const std::size_t at = static_cast<std::size_t>(r * cols);
    double dot = 0;
    for (std::int64_t k = 0; k < cols; ++k) dot += y[at + k] * dy[at + k];
    for (std::int64_t k = 0; k < cols; k += 41)
      ASSERT_NEAR(dx[at + k], y[at + k] * (dy[at + k] - dot), 1e-15) << "row " << r;
  }
}

}  // namespace
}  // namespace kbench
