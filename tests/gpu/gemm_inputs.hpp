// Inputs the GEMM GPU tests share (an InputTweak for prepare_case).
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.hpp"
#include "harness/problem.hpp"

namespace kbench::test {

// 2048 at k = 0, 1 at k = 16 and k = 32: three different mma steps. A float16 partial sum
// rounds 2049 to 2048 twice; float32 gives 2050, a float16 value. The op's tolerance for
// float16 (half an ulp, 1 at 2050) refuses 2048. Needs K > 32.
inline void fill_2050(const Case&, std::vector<HostTensor>& in) {
  HostTensor &a = in[0], &b = in[1];
  for (auto& v : a.values) v = 0;
  for (auto& v : b.values) v = 0;
  const std::int64_t k = a.desc.cols, n = b.desc.cols;
  for (std::int64_t r = 0; r < a.desc.rows; ++r)
    for (const std::int64_t at : {0, 16, 32}) a.values[static_cast<std::size_t>(r * k + at)] = 1;
  for (std::int64_t col = 0; col < n; ++col) {
    b.values[static_cast<std::size_t>(col)] = 2048;
    b.values[static_cast<std::size_t>(16 * n + col)] = 1;
    b.values[static_cast<std::size_t>(32 * n + col)] = 1;
  }
}

// Float16 operands whose split-K sums show their order (A [M, K] and B [K, N], row-major bits):
// in K's first 256 B is +1024 and in its next 256 -1024 against ones in A, so the first two
// ranges of 256 sum to +-1024 x 256 and cancel, and what the later ranges add (fractions i / 1024,
// exact in float16, from a hash of the element's index) is lost or kept by the order of the adds.
inline std::vector<std::uint16_t> split_order_a(int m, int k) {
  std::vector<std::uint16_t> a(static_cast<std::size_t>(m) * k);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto hash = static_cast<std::uint32_t>(i * 2654435761u);
    const double v = static_cast<int>(i % k) < 512 ? 1.0 : static_cast<double>(static_cast<int>(hash % 2047) - 1023) / 1024;
    a[i] = float_to_half_bits(static_cast<float>(v));
  }
  return a;
}
inline std::vector<std::uint16_t> split_order_b(int k, int n) {
  std::vector<std::uint16_t> b(static_cast<std::size_t>(k) * n);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const int row = static_cast<int>(i / n);
    const auto hash = static_cast<std::uint32_t>(i * 40503u + 7);
    const double v = row < 256 ? 1024 : row < 512 ? -1024 : static_cast<double>(static_cast<int>(hash % 2039) - 1019) / 1024;
    b[i] = float_to_half_bits(static_cast<float>(v));
  }
  return b;
}

}  // namespace kbench::test
