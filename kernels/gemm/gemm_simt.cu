// The SIMT GEMM: C = A.B with float32 FMAs on CUDA cores, any dtype, any alignment. The exact
// float32 path (no tf32 anywhere), and where the tensor-core kernels send operands whose rows
// are not on 16-byte boundaries (K = 65 in a contiguous A of 16-bit elements).
//
// A 64 x 64 tile per block of 256 threads, each thread 4 x 4 outputs; K in steps of 16. Every
// element is loaded on its own with a bounds check (zero past an edge), so any shape and any
// stride works; A's tile is stored transposed so that a thread's four rows are one broadcast.
#include <cuda_runtime.h>

#include "core/errors.hpp"
#include "kernels/common/dispatch.cuh"
#include "kernels/gemm/gemm_contract.hpp"
#include "kernels/gemm/gemm_kernels.hpp"

namespace kbench::gemm {

namespace {

constexpr int kTile = 64, kStep = 16, kThreads = 256, kPer = 4;

template <class T>
__global__ void __launch_bounds__(kThreads, 2)
    simt_gemm_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k,
                     std::int64_t lda, std::int64_t ldb) {
  __shared__ float as[kStep][kTile + 4];  // [k][m]
  __shared__ float bs[kStep][kTile + 4];  // [k][n]
  const int tiles_n = (n + kTile - 1) / kTile;
  const int m0 = static_cast<int>(blockIdx.x / tiles_n) * kTile, n0 = static_cast<int>(blockIdx.x % tiles_n) * kTile;
  const int tid = static_cast<int>(threadIdx.x);
  const int tm = (tid / 16) * kPer, tn = (tid % 16) * kPer;
  float acc[kPer][kPer] = {};
  for (int k0 = 0; k0 < k; k0 += kStep) {
#pragma unroll
    for (int step = 0; step < kTile * kStep / kThreads; ++step) {
      const int e = tid + step * kThreads;
      const int r = e / kStep, kk = e % kStep;  // A: consecutive threads along k
      const int gr = m0 + r, gk = k0 + kk;
      as[kk][r] = gr < m && gk < k ? to_float(a[static_cast<std::int64_t>(gr) * lda + gk]) : 0.f;
      const int br = e / kTile, bc = e % kTile;  // B: consecutive threads along n
      const int gbk = k0 + br, gbn = n0 + bc;
      bs[br][bc] = gbk < k && gbn < n ? to_float(b[static_cast<std::int64_t>(gbk) * ldb + gbn]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kStep; ++kk) {
      float av[kPer], bv[kPer];
#pragma unroll
      for (int i = 0; i < kPer; ++i) av[i] = as[kk][tm + i], bv[i] = bs[kk][tn + i];
#pragma unroll
      for (int i = 0; i < kPer; ++i)
#pragma unroll
        for (int j = 0; j < kPer; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kPer; ++i)
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int r = m0 + tm + i, col = n0 + tn + j;
      if (r < m && col < n) c[static_cast<std::int64_t>(r) * n + col] = from_float<T>(acc[i][j]);
    }
}

}  // namespace

void launch_simt(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, cudaStream_t stream) {
  check_gemm(a, b, c);
  if (std::string why = grid_problem(c.rows, c.cols, kTile, kTile); !why.empty())
    throw std::invalid_argument("gemm simt: " + why);
  const auto tiles = static_cast<unsigned>(((c.rows + kTile - 1) / kTile) * ((c.cols + kTile - 1) / kTile));
  dispatch_dtype(a.dtype, [&]<class T>() {
    simt_gemm_kernel<T><<<tiles, kThreads, 0, stream>>>(a.as<const T>(), b.as<const T>(), c.as<T>(),
                                                         static_cast<int>(c.rows), static_cast<int>(c.cols),
                                                         static_cast<int>(a.cols), a.row_stride, b.row_stride);
  });
  KB_CUDA(cudaGetLastError());
}

}  // namespace kbench::gemm
