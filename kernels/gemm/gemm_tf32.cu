// The tf32 GEMM: float32 A and B, products on tensor cores in tf32 (mma.sync m16n8k8: inputs
// rounded to 10-bit mantissas, to nearest as cvt.rna does: see to_tf32), sums in float32.
// Faster than the exact float32 path by the tensor cores' rate, less precise by tf32's
// rounding: the variant is named so and held to tf32_tolerance (gemm_op.cpp).
//
// The tiles and mainloop of gemm_mma.cuh's software-pipelined kernel with 32-bit elements: a
// 16-byte chunk holds 4 floats, so a BK = 32 tile row of A is the same 128 bytes as the 16-bit
// kernels' BK = 64, an m16n8k8 k-step reads the same two chunks of it as their m16n8k16, and
// A's fragments come from the same ldmatrix.x4 (lane l gets word (l / 4, l % 4) of each 8x8
// matrix of 16-bit pairs, which for floats is element (g, t) of an 8 x 4 block: exactly the
// m16n8k8 A layout). B [k][n] has no such load (its fragment wants (k = t, n = g), a transpose
// of 32-bit words that ldmatrix cannot do), so each thread reads float4s along n instead, and
// the warp's n columns are permuted to fit: within each 32 columns, thread g's "column g" of n
// tile jn is column 4g + jn. One float4 at row t then holds b0 of four n tiles, one at row
// t + 4 their b1 (16 mma's B operands from 4 loads), and the accumulators of a thread come out
// as 8 consecutive columns (8t .. 8t + 7) of each 32: the epilogue stores them as two float4s.
// B's swizzle XORs the chunk with 2 * (row mod 4): the 8 lanes of a float4 load phase (rows
// t = 0..3, chunks 2p, 2p + 1) then fall in 8 different chunks of a 128-byte bank line.
// Rows not on 16-byte boundaries go to the SIMT kernel, as for the 16-bit kernels.
#include <cuda_runtime.h>

#include <array>
#include <utility>

#include "core/errors.hpp"
#include "kernels/gemm/gemm_contract.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_mma.cuh"
#include "kernels/gemm/gemm_tiles.hpp"

namespace kbench::gemm {

namespace {

constexpr int kBK = 32, kKSteps = kBK / 8;

// Rounds to tf32 for the mma, which reads a tf32 operand's top 19 bits and ignores the low 13:
// adding half a tf32 ulp (bit 12) and leaving the truncation to the mma is round to nearest,
// ties away from zero, as cvt.rna.tf32.f32, carries into the exponent included (inf stays inf:
// bit 12 is dropped). One integer add, where cvt.rna is a conversion instruction of lower
// throughput (CUTLASS's round_half_ulp_truncate). The one difference: a NaN whose payload lies
// in the low 13 bits alone reads as inf.
__device__ __forceinline__ std::uint32_t to_tf32(std::uint32_t bits) { return bits + 0x1000u; }

__device__ __forceinline__ void mma_tf32(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void lds128(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

template <int BM, int BN, int WM, int WN, int STAGES>
struct Tf32Gemm {
  static constexpr int kWarpsN = BN / WN, kThreads = 32 * (BM / WM) * kWarpsN;
  static constexpr int kMTiles = WM / 16, kNGroups = WN / 32, kNTiles = WN / 8;
  static constexpr int kAChunks = kBK / 4, kBChunks = BN / 4;  // 16-byte chunks per tile row
  static constexpr int kAStageBytes = BM * kBK * 4, kBStageBytes = kBK * BN * 4;
  static constexpr int kSmemBytes = STAGES * (kAStageBytes + kBStageBytes);
  // Each thread copies one chunk column, rows kARowStep (kBRowStep) apart.
  static constexpr int kARowStep = kThreads / kAChunks, kBRowStep = kThreads / kBChunks;
  static_assert(WM % 16 == 0 && WN % 32 == 0 && BM % WM == 0 && BN % WN == 0, "tile shapes");
  static_assert(kThreads % kAChunks == 0 && BM % kARowStep == 0 && kARowStep % 8 == 0, "A copies keep the swizzle");
  static_assert(kThreads % kBChunks == 0 && kBK % kBRowStep == 0 && kBRowStep % 4 == 0, "B copies keep the swizzle");
  static_assert(STAGES >= 2, "a pipeline needs two buffers at least");
};

// Byte offsets in a tile: A's chunk XORed with row mod 8, B's with 2 * (row mod 4).
template <int kChunks>
__device__ __forceinline__ std::uint32_t a_at(int row, int chunk) {
  return static_cast<std::uint32_t>((row * kChunks + (chunk ^ (row & 7))) * 16);
}
template <int kChunks>
__device__ __forceinline__ std::uint32_t b_at(int row, int chunk) {
  return static_cast<std::uint32_t>((row * kChunks + (chunk ^ ((row & 3) << 1))) * 16);
}

template <int BM, int BN, int WM, int WN, int STAGES>
__global__ void __launch_bounds__(Tf32Gemm<BM, BN, WM, WN, STAGES>::kThreads, 1)
    tf32_gemm_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n,
                     int k, std::int64_t lda, std::int64_t ldb) {
  using G = Tf32Gemm<BM, BN, WM, WN, STAGES>;
  using namespace mma_detail;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const std::uint32_t smem_a = smem_addr(smem_raw), smem_b = smem_a + STAGES * G::kAStageBytes;

  // Grouped tile order, as the 16-bit kernels'.
  const int grid_m = (m + BM - 1) / BM, grid_n = (n + BN - 1) / BN;
  const TileCoord tile = grouped_tile(static_cast<int>(blockIdx.x), grid_m, grid_n);
  const int m0 = tile.m * BM, n0 = tile.n * BN;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int warp_m0 = (warp / G::kWarpsN) * WM, warp_n0 = (warp % G::kWarpsN) * WN;
  const int g = lane / 4, t = lane % 4;
  const int k_tiles = (k + kBK - 1) / kBK;

  // cp.async copies, zero-filled past M, N and K (as mma_gemm_fast_kernel's).
  const int a_row = tid / G::kAChunks, a_chunk = tid % G::kAChunks;
  const int b_row = tid / G::kBChunks, b_chunk = tid % G::kBChunks;
  const float* const a_base = a + static_cast<std::int64_t>(m0 + a_row) * lda + a_chunk * 4;
  const float* const b_base = b + static_cast<std::int64_t>(b_row) * ldb + n0 + b_chunk * 4;
  const std::uint32_t a_store = a_at<G::kAChunks>(a_row, a_chunk), b_store = b_at<G::kBChunks>(b_row, b_chunk);
  const auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * kBK;
    const std::uint32_t sa = smem_a + stage * G::kAStageBytes + a_store;
    const std::uint32_t sb = smem_b + stage * G::kBStageBytes + b_store;
    const int gc_a = k0 + a_chunk * 4, a_bytes = gc_a < k ? min(4, k - gc_a) * 4 : 0;
    const float* src_a = a_base + k0;
#pragma unroll
    for (int p = 0; p < BM / G::kARowStep; ++p) {
      const bool ok = m0 + a_row + p * G::kARowStep < m && a_bytes > 0;
      cp_async16(sa + p * G::kARowStep * G::kAChunks * 16, ok ? src_a : a, ok ? a_bytes : 0);
      src_a += static_cast<std::int64_t>(G::kARowStep) * lda;
    }
    const int gc_b = n0 + b_chunk * 4, b_bytes = gc_b < n ? min(4, n - gc_b) * 4 : 0;
    const float* src_b = b_base + static_cast<std::int64_t>(k0) * ldb;
#pragma unroll
    for (int p = 0; p < kBK / G::kBRowStep; ++p) {
      const bool ok = k0 + b_row + p * G::kBRowStep < k && b_bytes > 0;
      cp_async16(sb + p * G::kBRowStep * G::kBChunks * 16, ok ? src_b : b, ok ? b_bytes : 0);
      src_b += static_cast<std::int64_t>(G::kBRowStep) * ldb;
    }
  };

  // Fragments of k-step kk (8 k's: A's chunks 2kk and 2kk + 1, B's rows 8kk .. 8kk + 7), rounded
  // to tf32. A's chunk 2kk + lane / 16 swizzles to a byte offset XORed with kk * 32, as in
  // gemm_mma.cuh; B's rows t and t + 4 have the same swizzle, and so do rows 8kk further.
  const std::uint32_t a_frag = a_at<G::kAChunks>(warp_m0 + lane % 16, lane / 16);
  std::uint32_t b_frag[G::kNGroups];
#pragma unroll
  for (int q = 0; q < G::kNGroups; ++q) b_frag[q] = b_at<G::kBChunks>(t, (warp_n0 + q * 32) / 4 + g);
  const auto load_frags = [&](std::uint32_t (&af)[G::kMTiles][4], std::uint32_t (&bf)[G::kNTiles][2], int stage,
                              int kk) {
    const std::uint32_t sa = smem_a + stage * G::kAStageBytes, sb = smem_b + stage * G::kBStageBytes;
#pragma unroll
    for (int i = 0; i < G::kMTiles; ++i) {
      ldmatrix_x4(af[i], sa + ((a_frag ^ static_cast<std::uint32_t>(kk * 32)) + i * 16 * G::kAChunks * 16));
#pragma unroll
      for (int e = 0; e < 4; ++e) af[i][e] = to_tf32(af[i][e]);
    }
#pragma unroll
    for (int q = 0; q < G::kNGroups; ++q) {
      std::uint32_t lo[4], hi[4];
      lds128(lo, sb + b_frag[q] + kk * 8 * G::kBChunks * 16);
      lds128(hi, sb + b_frag[q] + (kk * 8 + 4) * G::kBChunks * 16);
#pragma unroll
      for (int jn = 0; jn < 4; ++jn) {
        bf[q * 4 + jn][0] = to_tf32(lo[jn]);
        bf[q * 4 + jn][1] = to_tf32(hi[jn]);
      }
    }
  };

  float acc[G::kMTiles][G::kNTiles][4];
#pragma unroll
  for (int i = 0; i < G::kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < G::kNTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

  // The mainloop of mma_gemm_fast_kernel (its ordering argument holds unchanged): fragments
  // double-buffered, the next tile's first ones loaded across the barrier, the next copies
  // issued in the first k-step.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();
  }
  cp_async_wait<STAGES - 2>();
  __syncthreads();

  std::uint32_t af[2][G::kMTiles][4];
  std::uint32_t bf[2][G::kNTiles][2];
  int read_stage = 0, write_stage = STAGES - 1;
  load_frags(af[0], bf[0], read_stage, 0);
  for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      if (kk == kKSteps - 1) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
      }
      load_frags(af[(kk + 1) % 2], bf[(kk + 1) % 2], read_stage, (kk + 1) % kKSteps);
      if (kk == 0) {
        const int next = kt + STAGES - 1;
        if (next < k_tiles) load_stage(write_stage, next);
        cp_async_commit();
        write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
      }
#pragma unroll
      for (int i = 0; i < G::kMTiles; ++i)
#pragma unroll
        for (int jj = 0; jj < G::kNTiles; ++jj) {
          const int j = i % 2 == 0 ? jj : G::kNTiles - 1 - jj;  // serpentine, as gemm_mma.cuh's
          mma_tf32(acc[i][j], af[kk % 2][i], bf[kk % 2][j][0], bf[kk % 2][j][1]);
        }
    }
  }
  cp_async_wait<0>();

  // Thread (g, t) holds, for row g (+8 when h = 1) of m tile i, columns 8t .. 8t + 7 of each
  // 32-column group q: column 8t + jn is acc[i][4q + jn][2h], column 8t + 4 + jn is [2h + 1].
  const bool vector_ok = n % 4 == 0 && (reinterpret_cast<std::uintptr_t>(c) % 16) == 0;
#pragma unroll
  for (int i = 0; i < G::kMTiles; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + warp_m0 + i * 16 + g + h * 8;
      if (row >= m) continue;
      float* const out = c + static_cast<std::int64_t>(row) * n;
#pragma unroll
      for (int q = 0; q < G::kNGroups; ++q) {
        const int col = n0 + warp_n0 + q * 32 + 8 * t;
        const float4 lo = {acc[i][4 * q][2 * h], acc[i][4 * q + 1][2 * h], acc[i][4 * q + 2][2 * h],
                           acc[i][4 * q + 3][2 * h]};
        const float4 hi = {acc[i][4 * q][2 * h + 1], acc[i][4 * q + 1][2 * h + 1], acc[i][4 * q + 2][2 * h + 1],
                           acc[i][4 * q + 3][2 * h + 1]};
        if (vector_ok) {  // n a multiple of 4: both float4s are wholly inside or wholly outside
          if (col < n) *reinterpret_cast<float4*>(out + col) = lo;
          if (col + 4 < n) *reinterpret_cast<float4*>(out + col + 4) = hi;
        } else {
          const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
          for (int e = 0; e < 8; ++e)
            if (col + e < n) out[col + e] = v[e];
        }
      }
    }
}

template <std::size_t I>
cudaError_t launch_config(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, cudaStream_t stream) {
  constexpr TileConfig t = kTf32Configs[I];
  static_assert(t.bk == kBK, "the tf32 kernel's tile row is 32 floats");
  using G = Tf32Gemm<t.bm, t.bn, t.wm, t.wn, t.stages>;
  const auto kernel = tf32_gemm_kernel<t.bm, t.bn, t.wm, t.wn, t.stages>;
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes);
  if (attr != cudaSuccess) return attr;
  const auto tiles = static_cast<unsigned>(((c.rows + t.bm - 1) / t.bm) * ((c.cols + t.bn - 1) / t.bn));
  kernel<<<tiles, G::kThreads, G::kSmemBytes, stream>>>(a.as<const float>(), b.as<const float>(), c.as<float>(),
                                                        static_cast<int>(c.rows), static_cast<int>(c.cols),
                                                        static_cast<int>(a.cols), a.row_stride, b.row_stride);
  return cudaGetLastError();
}

template <std::size_t... I>
cudaError_t launch_indexed(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                           cudaStream_t stream, std::index_sequence<I...>) {
  cudaError_t result = cudaErrorInvalidValue;
  ((index == I ? (result = launch_config<I>(a, b, c, stream), true) : false) || ...);
  return result;
}

}  // namespace

void launch_tf32(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                 cudaStream_t stream) {
  if (index >= kTf32Configs.size()) throw std::invalid_argument("gemm: no tf32 configuration " + std::to_string(index));
  if (a.dtype != DType::f32) throw std::invalid_argument("gemm tf32: takes float32 inputs");
  check_gemm(a, b, c);
  const TileConfig& t = kTf32Configs[index];
  if (std::string why = grid_problem(c.rows, c.cols, t.bm, t.bn); !why.empty())
    throw std::invalid_argument("gemm tf32_" + t.name() + ": " + why);
  if (!rows_aligned16(a) || !rows_aligned16(b)) return launch_simt(a, b, c, stream);
  KB_CUDA(launch_indexed(index, a, b, c, stream, std::make_index_sequence<kTf32Configs.size()>{}));
}

}  // namespace kbench::gemm
