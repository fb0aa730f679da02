// The tensor-core kernel template with transposed operands (gemm_mma.cuh kATrans, kBTrans):
// A given as A^T [K, M] rows, B as B^T [N, K] rows, read through their strides, as a backward
// pass reads them. Small integers make every product and sum exact in float16 and float32, so
// C must equal the host's product exactly; the tiles are ragged in M, N and K.
#include <gtest/gtest.h>

#include <vector>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "gpu_test.hpp"
#include "kernels/gemm/gemm_mma.cuh"

namespace kbench::gemm {
namespace {

template <bool kATrans, bool kBTrans, int BM, int BN, int WM, int WN>
void expect_exact(int m, int n, int k, int pad) {
  // Stored shapes: A [m, k] or A^T [k, m]; B [k, n] or B^T [n, k]; each row padded by `pad`.
  const int a_rows = kATrans ? k : m, a_cols = kATrans ? m : k, b_rows = kBTrans ? n : k, b_cols = kBTrans ? k : n;
  const int lda = a_cols + pad, ldb = b_cols + pad;
  std::vector<double> av(static_cast<std::size_t>(m) * k), bv(static_cast<std::size_t>(k) * n);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>((i * 7 + 3) % 9) - 4;
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>((i * 5 + 1) % 7) - 3;
  std::vector<std::uint16_t> ha(static_cast<std::size_t>(a_rows) * lda, 0x7e00), hb(static_cast<std::size_t>(b_rows) * ldb, 0x7e00);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j)
      ha[kATrans ? static_cast<std::size_t>(j) * lda + i : static_cast<std::size_t>(i) * lda + j] =
          float_to_half_bits(static_cast<float>(av[static_cast<std::size_t>(i) * k + j]));
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < n; ++j)
      hb[kBTrans ? static_cast<std::size_t>(j) * ldb + i : static_cast<std::size_t>(i) * ldb + j] =
          float_to_half_bits(static_cast<float>(bv[static_cast<std::size_t>(i) * n + j]));
  DeviceBuffer da(ha.size() * 2), db(hb.size() * 2), dc(static_cast<std::size_t>(m) * n * 2);
  KB_CUDA(cudaMemcpy(da.get(), ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemcpy(db.get(), hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemset(dc.get(), 0xFF, dc.size()));
  KB_CUDA((launch_mma_gemm<__half, BM, BN, 64, WM, WN, 3, kATrans, kBTrans>(
      static_cast<const __half*>(da.get()), static_cast<const __half*>(db.get()), static_cast<__half*>(dc.get()), m, n,
      k, lda, ldb, nullptr)));
  std::vector<std::uint16_t> got(static_cast<std::size_t>(m) * n);
  KB_CUDA(cudaMemcpy(got.data(), dc.get(), got.size() * 2, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int q = 0; q < k; ++q) ref += av[static_cast<std::size_t>(i) * k + q] * bv[static_cast<std::size_t>(q) * n + j];
      const double v = half_bits_to_float(got[static_cast<std::size_t>(i) * n + j]);
      if (v != ref && bad++ < 3)
        ADD_FAILURE() << "A^T " << kATrans << " B^T " << kBTrans << " " << m << "x" << n << "x" << k << " at (" << i
                      << ", " << j << "): " << v << ", expected " << ref;
    }
  EXPECT_EQ(bad, 0);
}

TEST(GemmGpu, TransposedOperandsThroughStrides) {
  KB_REQUIRE_GPU();
  // M, N and K multiples of 8 (every stored row 16-byte aligned), none a multiple of the tiles.
  for (const int pad : {0, 8}) {
    expect_exact<false, false, 128, 128, 64, 64>(136, 72, 88, pad);
    expect_exact<true, false, 128, 128, 64, 64>(136, 72, 88, pad);
    expect_exact<false, true, 128, 128, 64, 64>(136, 72, 88, pad);
    expect_exact<true, true, 128, 128, 64, 64>(136, 72, 88, pad);
    expect_exact<true, false, 64, 64, 32, 32>(200, 136, 264, pad);
    expect_exact<false, true, 64, 64, 32, 32>(200, 136, 264, pad);
  }
}

}  // namespace
}  // namespace kbench::gemm
