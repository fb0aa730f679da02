// The tf32 GEMM: float32 A and B, products on tensor cores in tf32 (mma.sync m16n8k8: inputs
// rounded to 10-bit mantissas with cvt.rna), sums in float32. Faster than the exact float32
// path by the tensor cores' rate, less precise by tf32's rounding: the variant is named so and
// held to tf32_tolerance (gemm_op.cpp).
//
// The pipeline of gemm_mma.cuh with 32-bit elements: a 128 x 128 block tile, BK = 32 (a tile row
// of A is 128 bytes, eight 16-byte chunks, XOR-swizzled with the row), eight warps of 64 x 32,
// three cp.async stages. ldmatrix moves 16-bit pairs, so the fragments are read with 32-bit
// shared loads in the mma's own layout; the swizzle keeps A's free of bank conflicts (B's
// reads of four k-rows meet two ways at most). Rows not on 16-byte boundaries go to the SIMT
// kernel, as for the 16-bit kernels.
#include <cuda_runtime.h>

#include "core/errors.hpp"
#include "kernels/gemm/gemm_contract.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_mma.cuh"

namespace kbench::gemm {

namespace {

constexpr int BM = 128, BN = 128, BK = 32, WM = 64, WN = 32, STAGES = 3;
constexpr int kWarpsN = BN / WN, kThreads = 32 * (BM / WM) * kWarpsN;
constexpr int kMTiles = WM / 16, kNTiles = WN / 8;
constexpr int kAChunks = BK / 4, kBChunks = BN / 4;  // 16-byte chunks (4 floats) per tile row
constexpr int kAStage = BM * BK, kBStage = BK * BN;
constexpr int kSmemBytes = STAGES * (kAStage + kBStage) * 4;

// Float offset of element (row, col) in a tile of kChunks chunks per row.
template <int kChunks>
__device__ __forceinline__ int at(int row, int col) {
  return (row * kChunks + ((col / 4) ^ (row & 7))) * 4 + col % 4;
}

__device__ __forceinline__ std::uint32_t to_tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__global__ void __launch_bounds__(kThreads)
    tf32_gemm_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n,
                     int k, std::int64_t lda, std::int64_t ldb) {
  using namespace mma_detail;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  float* const smem_a = reinterpret_cast<float*>(smem_raw);
  float* const smem_b = smem_a + STAGES * kAStage;

  const int grid_m = (m + BM - 1) / BM, grid_n = (n + BN - 1) / BN;
  const int pid = static_cast<int>(blockIdx.x);
  const int per_group = kGroupM * grid_n;
  const int first_m = (pid / per_group) * kGroupM;
  const int group_rows = min(grid_m - first_m, kGroupM);
  const int m0 = (first_m + (pid % per_group) % group_rows) * BM, n0 = ((pid % per_group) / group_rows) * BN;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int warp_m0 = (warp / kWarpsN) * WM, warp_n0 = (warp % kWarpsN) * WN;
  const int g = lane / 4, t = lane % 4;
  const int k_tiles = (k + BK - 1) / BK;

  const auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * BK;
    const std::uint32_t sa = smem_addr(smem_a + stage * kAStage), sb = smem_addr(smem_b + stage * kBStage);
#pragma unroll
    for (int idx = tid; idx < BM * kAChunks; idx += kThreads) {
      const int row = idx / kAChunks, chunk = idx % kAChunks;
      const int gr = m0 + row, gc = k0 + chunk * 4;
      const int valid = gr < m && gc < k ? min(4, k - gc) : 0;
      cp_async16(sa + at<kAChunks>(row, chunk * 4) * 4, valid > 0 ? a + static_cast<std::int64_t>(gr) * lda + gc : a,
                 valid * 4);
    }
#pragma unroll
    for (int idx = tid; idx < BK * kBChunks; idx += kThreads) {
      const int row = idx / kBChunks, chunk = idx % kBChunks;
      const int gr = k0 + row, gc = n0 + chunk * 4;
      const int valid = gr < k && gc < n ? min(4, n - gc) : 0;
      cp_async16(sb + at<kBChunks>(row, chunk * 4) * 4, valid > 0 ? b + static_cast<std::int64_t>(gr) * ldb + gc : b,
                 valid * 4);
    }
  };

  float acc[kMTiles][kNTiles][4] = {};
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < k_tiles) load_stage(next % STAGES, next);
    cp_async_commit();
    const float* sa = smem_a + (kt % STAGES) * kAStage;
    const float* sb = smem_b + (kt % STAGES) * kBStage;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      std::uint32_t af[kMTiles][4], bf[kNTiles][2];
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        const int r = warp_m0 + i * 16 + g;
        af[i][0] = to_tf32(sa[at<kAChunks>(r, kk + t)]);
        af[i][1] = to_tf32(sa[at<kAChunks>(r + 8, kk + t)]);
        af[i][2] = to_tf32(sa[at<kAChunks>(r, kk + t + 4)]);
        af[i][3] = to_tf32(sa[at<kAChunks>(r + 8, kk + t + 4)]);
      }
#pragma unroll
      for (int j = 0; j < kNTiles; ++j) {
        const int col = warp_n0 + j * 8 + g;
        bf[j][0] = to_tf32(sb[at<kBChunks>(kk + t, col)]);
        bf[j][1] = to_tf32(sb[at<kBChunks>(kk + t + 4, col)]);
      }
#pragma unroll
      for (int i = 0; i < kMTiles; ++i)
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) mma_tf32(acc[i][j], af[i], bf[j][0], bf[j][1]);
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      const int col = n0 + warp_n0 + j * 8 + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp_m0 + i * 16 + g + h * 8;
        if (row >= m) continue;
        float* out = c + static_cast<std::int64_t>(row) * n;
        if (col < n) out[col] = acc[i][j][2 * h];
        if (col + 1 < n) out[col + 1] = acc[i][j][2 * h + 1];
      }
    }
}

}  // namespace

void launch_tf32(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, cudaStream_t stream) {
  if (a.dtype != DType::f32) throw std::invalid_argument("gemm tf32: takes float32 inputs");
  check_gemm(a, b, c);
  if (std::string why = grid_problem(c.rows, c.cols, BM, BN); !why.empty()) throw std::invalid_argument("gemm tf32: " + why);
  if (!rows_aligned16(a) || !rows_aligned16(b)) return launch_simt(a, b, c, stream);
  static const cudaError_t attr =
      cudaFuncSetAttribute(tf32_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  KB_CUDA(attr);
  const auto tiles = static_cast<unsigned>(((c.rows + BM - 1) / BM) * ((c.cols + BN - 1) / BN));
  tf32_gemm_kernel<<<tiles, kThreads, kSmemBytes, stream>>>(a.as<const float>(), b.as<const float>(), c.as<float>(),
                                                            static_cast<int>(c.rows), static_cast<int>(c.cols),
                                                            static_cast<int>(a.cols), a.row_stride, b.row_stride);
  KB_CUDA(cudaGetLastError());
}

}  // namespace kbench::gemm
