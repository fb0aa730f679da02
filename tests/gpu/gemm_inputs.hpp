// Inputs the GEMM GPU tests share (an InputTweak for prepare_case).
#pragma once

#include <cstdint>
#include <vector>

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

}  // namespace kbench::test
