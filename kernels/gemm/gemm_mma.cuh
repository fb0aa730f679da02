// The tensor-core GEMM kernel template (sm_80 and later): C [M, N] = A [M, K] . B [K, N] for
// float16 and bfloat16, float32 accumulators, C rounded once to the dtype.
//
// One block computes a BM x BN tile of C; the tiles are numbered along a one-dimensional grid
// in grouped order (kGroupM rows of tiles at a time), so that blocks resident together reuse the
// same panels of A and B from L2. The block walks K in steps of BK:
//   1. cp.async copies the next A [BM, BK] and B [BK, BN] tiles, 16 bytes per copy, into one of
//      STAGES shared-memory buffers (zero-filled past the edges of M, N and K: ragged tiles need
//      no other masking, and nothing is read out of bounds); STAGES - 1 tiles are in flight
//      while the block computes on the oldest (cp.async.wait_group).
//   2. Each warp computes a WM x WN sub-tile with mma.sync m16n8k16: A fragments come from
//      ldmatrix.x4, B fragments from ldmatrix.x4.trans (B is stored [k][n], the mma wants it
//      k-major per column: the transposing load gives exactly that layout).
//   3. The epilogue converts the accumulators to the dtype and stores them, bounds-checked.
// Shared memory rows are 128-byte groups of eight 16-byte chunks, the chunk index XORed with the
// row (mod 8): the eight rows one ldmatrix phase reads land in eight different chunks, so the
// loads are free of bank conflicts, and so are the cp.async stores.
//
// Either operand may be given transposed (kATrans: memory holds A^T as [K, M] rows; kBTrans:
// B^T as [N, K] rows), read through its row stride with no copy: the tile is stored in shared
// memory as it lies in global memory, and the fragment load changes instead (ldmatrix .trans
// for A^T, plain for B^T), which is what a backward pass (dA = dC.B^T, dB = A^T.dC) needs.
// Needs every row of A and B on a 16-byte boundary (rows_aligned16): the launcher sends other
// operands to the SIMT kernel (gemm_simt.cu). The Fault parameter exists for the negative
// controls of the tests (tests/gpu/test_gemm_negative_controls.cu): kernels broken on purpose,
// each in one way, that the checker must catch; the registered variants use Fault::none.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/gemm/gemm_tile.cuh"
#include "kernels/gemm/gemm_tiles.hpp"

namespace kbench::gemm {

// keep_split_counter and reverse_split_order break the swapped product's in-kernel split sum
// (gemm_wgmma.cuh) alone: its tile counter left set after the sum, its slices summed last to first;
// skip_stream_k_partial the stream-K configurations' (the partial of a tile cut between two
// blocks never added).
enum class Fault { none, half_accumulator, drop_k_tail, skip_tile, keep_split_counter, reverse_split_order, skip_stream_k_partial };

namespace mma_detail {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared; only `bytes` (0..16) are read, the rest zero-filled.
__device__ __forceinline__ void cp_async16(std::uint32_t dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

template <class T>
struct MmaOp;

template <>
struct MmaOp<__half> {
  static __device__ __forceinline__ void run(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                             std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <>
struct MmaOp<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                             std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

// The negative control's 16-bit accumulator: float16 partial sums, widened after each mma.
__device__ __forceinline__ void mma_half_accumulate(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                    std::uint32_t b1) {
  __half2 lo = __floats2half2_rn(d[0], d[1]), hi = __floats2half2_rn(d[2], d[3]);
  std::uint32_t c0 = *reinterpret_cast<std::uint32_t*>(&lo), c1 = *reinterpret_cast<std::uint32_t*>(&hi);
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
      : "+r"(c0), "+r"(c1)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  lo = *reinterpret_cast<__half2*>(&c0);
  hi = *reinterpret_cast<__half2*>(&c1);
  d[0] = __low2float(lo), d[1] = __high2float(lo), d[2] = __low2float(hi), d[3] = __high2float(hi);
}

// Element offset of 16-byte chunk `chunk` of row `row` in a tile of `chunks_per_row` chunks
// (a multiple of 8): the chunk's low three bits XORed with the row's.
template <int kChunksPerRow>
__device__ __forceinline__ int swizzled(int row, int chunk) {
  static_assert(kChunksPerRow % 8 == 0, "the swizzle works on 128-byte groups");
  return (row * kChunksPerRow + (chunk ^ (row & 7))) * 8;
}

}  // namespace mma_detail

template <class T, int BM, int BN, int BK, int WM, int WN, int STAGES, bool kATrans = false, bool kBTrans = false,
          Fault F = Fault::none>
struct MmaGemm {
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kMTiles = WM / 16, kNTiles = WN / 8;
  // 16-byte chunks per shared-memory row of each tile, stored as it lies in global memory:
  // A [BM][BK] or A^T [BK][BM], B [BK][BN] or B^T [BN][BK].
  static constexpr int kAChunks = (kATrans ? BM : BK) / 8, kBChunks = (kBTrans ? BK : BN) / 8;
  static constexpr int kARows = kATrans ? BK : BM, kBRows = kBTrans ? BN : BK;
  static constexpr int kAStage = BM * BK, kBStage = BK * BN;    // elements per stage
  static constexpr int kSmemBytes = STAGES * (kAStage + kBStage) * static_cast<int>(sizeof(T));
  static_assert(sizeof(T) == 2, "the tensor-core path takes 16-bit inputs");
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "tile shapes");
  static_assert(STAGES >= 2, "a pipeline needs two buffers at least");
};

template <class T, int BM, int BN, int BK, int WM, int WN, int STAGES, bool kATrans, bool kBTrans, Fault F>
__global__ void __launch_bounds__(MmaGemm<T, BM, BN, BK, WM, WN, STAGES, kATrans, kBTrans, F>::kThreads)
    mma_gemm_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k,
                    std::int64_t lda, std::int64_t ldb) {
  using G = MmaGemm<T, BM, BN, BK, WM, WN, STAGES, kATrans, kBTrans, F>;
  using namespace mma_detail;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* const smem_a = reinterpret_cast<T*>(smem_raw);
  T* const smem_b = smem_a + STAGES * G::kAStage;

  // Grouped tile order: kGroupM rows of tiles, then the next kGroupM.
  const int grid_m = (m + BM - 1) / BM, grid_n = (n + BN - 1) / BN;
  const int pid = static_cast<int>(blockIdx.x);
  const TileCoord tile = grouped_tile(pid, grid_m, grid_n);
  if constexpr (F == Fault::skip_tile)
    if (pid == (grid_m * grid_n) / 2) return;
  const int m0 = tile.m * BM, n0 = tile.n * BN;

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int warp_m0 = (warp / G::kWarpsN) * WM, warp_n0 = (warp % G::kWarpsN) * WN;

  // k tiles to walk: the last may be partial (zero-filled); the fault drops it.
  int k_tiles = (k + BK - 1) / BK;
  if constexpr (F == Fault::drop_k_tail) k_tiles = k / BK;

  const auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * BK;
    const std::uint32_t sa = smem_addr(smem_a + stage * G::kAStage);
    const std::uint32_t sb = smem_addr(smem_b + stage * G::kBStage);
    // A's rows run along m (columns along k), A^T's along k; B's along k, B^T's along n.
    const int a_row0 = kATrans ? k0 : m0, a_col0 = kATrans ? m0 : k0;
    const int a_rows = kATrans ? k : m, a_cols = kATrans ? m : k;
    const int b_row0 = kBTrans ? n0 : k0, b_col0 = kBTrans ? k0 : n0;
    const int b_rows = kBTrans ? n : k, b_cols = kBTrans ? k : n;
#pragma unroll
    for (int idx = tid; idx < G::kARows * G::kAChunks; idx += G::kThreads) {
      const int row = idx / G::kAChunks, chunk = idx % G::kAChunks;
      const int gr = a_row0 + row, gc = a_col0 + chunk * 8;
      const int valid = gr < a_rows && gc < a_cols ? min(8, a_cols - gc) : 0;
      const T* src = valid > 0 ? a + static_cast<std::int64_t>(gr) * lda + gc : a;
      cp_async16(sa + swizzled<G::kAChunks>(row, chunk) * 2, src, valid * 2);
    }
#pragma unroll
    for (int idx = tid; idx < G::kBRows * G::kBChunks; idx += G::kThreads) {
      const int row = idx / G::kBChunks, chunk = idx % G::kBChunks;
      const int gr = b_row0 + row, gc = b_col0 + chunk * 8;
      const int valid = gr < b_rows && gc < b_cols ? min(8, b_cols - gc) : 0;
      const T* src = valid > 0 ? b + static_cast<std::int64_t>(gr) * ldb + gc : b;
      cp_async16(sb + swizzled<G::kBChunks>(row, chunk) * 2, src, valid * 2);
    }
  };

  float acc[G::kMTiles][G::kNTiles][4];
#pragma unroll
  for (int i = 0; i < G::kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < G::kNTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();  // empty groups too: wait_group counts groups, not copies
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's copies)
    __syncthreads();              // ... and everyone's; the buffer of tile kt - 1 is free
    const int next = kt + STAGES - 1;
    if (next < k_tiles) load_stage(next % STAGES, next);
    cp_async_commit();

    const int stage = kt % STAGES;
    const std::uint32_t sa = smem_addr(smem_a + stage * G::kAStage);
    const std::uint32_t sb = smem_addr(smem_b + stage * G::kBStage);
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      std::uint32_t af[G::kMTiles][4];
      std::uint32_t bf[G::kNTiles / 2][4];
      // The four 8x8 matrices of one ldmatrix.x4, lanes 8q..8q+7 giving the rows of matrix q:
      // A's fragment wants (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15);
      // B's, for two n tiles, (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
#pragma unroll
      for (int i = 0; i < G::kMTiles; ++i) {
        if constexpr (!kATrans) {  // rows m, chunks along k
          const int row = warp_m0 + i * 16 + lane % 16, chunk = kk * 2 + lane / 16;
          ldmatrix_x4(af[i], sa + swizzled<G::kAChunks>(row, chunk) * 2);
        } else {  // rows k, chunks along m: the transposing load
          const int row = kk * 16 + lane % 8 + (lane / 16) * 8, chunk = (warp_m0 + i * 16) / 8 + (lane / 8) % 2;
          ldmatrix_x4_trans(af[i], sa + swizzled<G::kAChunks>(row, chunk) * 2);
        }
      }
#pragma unroll
      for (int j = 0; j < G::kNTiles / 2; ++j) {
        if constexpr (!kBTrans) {  // rows k, chunks along n: the transposing load
          const int row = kk * 16 + lane % 8 + ((lane / 8) % 2) * 8;
          const int chunk = (warp_n0 + j * 16) / 8 + lane / 16;
          ldmatrix_x4_trans(bf[j], sb + swizzled<G::kBChunks>(row, chunk) * 2);
        } else {  // rows n, chunks along k
          const int row = warp_n0 + j * 16 + lane % 8 + (lane / 16) * 8, chunk = kk * 2 + (lane / 8) % 2;
          ldmatrix_x4(bf[j], sb + swizzled<G::kBChunks>(row, chunk) * 2);
        }
      }
#pragma unroll
      for (int i = 0; i < G::kMTiles; ++i)
#pragma unroll
        for (int j = 0; j < G::kNTiles; ++j) {
          const std::uint32_t b0 = bf[j / 2][(j % 2) * 2], b1 = bf[j / 2][(j % 2) * 2 + 1];
          if constexpr (F == Fault::half_accumulator) mma_half_accumulate(acc[i][j], af[i], b0, b1);
          else MmaOp<T>::run(acc[i][j], af[i], b0, b1);
        }
    }
  }
  cp_async_wait<0>();  // no copy may outlive the block (the trailing groups are empty)

  // Accumulator (i, j, e): row g (+8 for e >= 2), columns 2t and 2t + 1 of the 8-wide n tile.
  const int g = lane / 4, t = lane % 4;
  const bool pairs_aligned = n % 2 == 0 && (reinterpret_cast<std::uintptr_t>(c) % 4) == 0;
#pragma unroll
  for (int i = 0; i < G::kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < G::kNTiles; ++j) {
      const int col = n0 + warp_n0 + j * 8 + 2 * t;
      if (col >= n) continue;
      const bool both = col + 1 < n;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp_m0 + i * 16 + g + h * 8;
        if (row >= m) continue;
        store_pair(c, static_cast<std::int64_t>(row) * n + col, acc[i][j][2 * h], acc[i][j][2 * h + 1], both,
                   both && pairs_aligned);
      }
    }
}

// The software-pipelined variant of the kernel, for the `_fast` tile configurations and the
// backward's layouts: the same tiles, operand layouts (kATrans, kBTrans), swizzle, zero-filled
// cp.async copies and epilogue as mma_gemm_kernel (every row whole 16-byte chunks, which
// rows_aligned16 guarantees, so that a copy is all or nothing), with the mainloop arranged as
// CUTLASS's sm80 multistage one:
//   - the fragments are double-buffered in registers: the ldmatrix loads of k-step kk + 1 are
//     issued before the mma's of step kk, so no mma waits on the load just before it;
//   - the fragments of the next tile's first k-step are loaded across the tile boundary: the
//     cp.async wait and the barrier come before the last k-step's mma's, not after them;
//   - the next tile's cp.async copies are issued in the first k-step, after its fragment loads
//     and before its mma's; the stage indices are carried, not recomputed with a modulo.
// The ordering argument (STAGES - 2 groups may stay in flight at each wait): before the wait of
// tile kt's last k-step, STAGES + kt groups have been committed (tiles 0 .. kt + STAGES - 1), and
// tile kt + 1 needs the first kt + 2 of them. The buffer tile kt's first k-step overwrites held
// tile kt - 1, whose last ldmatrix came before the barrier of tile kt - 1's last k-step.
// Needs BK / 16 even (the wait count assumes the copies of a tile are committed before its last
// k-step, and the fragment buffers alternate so that k-step 0 always reads buffer 0).
template <class T, int BM, int BN, int BK, int WM, int WN, int STAGES>
struct MmaFastBounds {
  static constexpr int kThreads = MmaGemm<T, BM, BN, BK, WM, WN, STAGES>::kThreads;
  static constexpr int kMinBlocks = 1;
};

template <class T, int BM, int BN, int BK, int WM, int WN, int STAGES, bool kATrans = false, bool kBTrans = false>
__global__ void __launch_bounds__(MmaFastBounds<T, BM, BN, BK, WM, WN, STAGES>::kThreads,
                                  MmaFastBounds<T, BM, BN, BK, WM, WN, STAGES>::kMinBlocks)
    mma_gemm_fast_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k,
                         std::int64_t lda, std::int64_t ldb) {
  using G = MmaGemm<T, BM, BN, BK, WM, WN, STAGES, kATrans, kBTrans>;
  using namespace mma_detail;
  constexpr int kKSteps = BK / 16;
  static_assert(kKSteps >= 2 && kKSteps % 2 == 0, "the fragment buffers alternate: an even number of k-steps");
  static_assert(G::kNTiles % 2 == 0, "B fragments come two n tiles at a time");
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* const smem_a = reinterpret_cast<T*>(smem_raw);
  T* const smem_b = smem_a + STAGES * G::kAStage;

  // Grouped tile order, as mma_gemm_kernel's.
  const int grid_m = (m + BM - 1) / BM, grid_n = (n + BN - 1) / BN;
  const int pid = static_cast<int>(blockIdx.x);
  const TileCoord tile = grouped_tile(pid, grid_m, grid_n);
  const int m0 = tile.m * BM, n0 = tile.n * BN;

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int warp_m0 = (warp / G::kWarpsN) * WM, warp_n0 = (warp % G::kWarpsN) * WN;
  const int k_tiles = (k + BK - 1) / BK;

  // The tiles as they lie in memory (A [BM][BK] rows along m, or A^T [BK][BM] rows along k; B
  // [BK][BN] rows along k, or B^T [BN][BK] rows along n), zero-filled past M, N and K. Each
  // thread copies one fixed chunk column of rows kARowStep (kBRowStep) apart, so that its
  // addresses are one base pointer stepped by a constant stride (few registers live across the
  // loop). Along k a tile moves by BK columns of an operand stored untransposed, by BK rows of
  // one stored transposed.
  constexpr int kARowStep = G::kThreads / G::kAChunks, kBRowStep = G::kThreads / G::kBChunks;
  static_assert(G::kThreads % G::kAChunks == 0 && G::kARows % kARowStep == 0, "A copies: whole rows per pass");
  static_assert(G::kThreads % G::kBChunks == 0 && G::kBRows % kBRowStep == 0, "B copies: whole rows per pass");
  // Rows kARowStep apart have the same row mod 8, so the swizzled offset moves by whole rows.
  static_assert(kARowStep % 8 == 0 && kBRowStep % 8 == 0, "copies keep the row's swizzle");
  const int a_row = tid / G::kAChunks, a_chunk = tid % G::kAChunks;
  const int b_row = tid / G::kBChunks, b_chunk = tid % G::kBChunks;
  // Fixed per thread: the untransposed A's row (m) and B^T's row (n), A^T's column (m) and B's (n).
  const int a_fixed = (kATrans ? m0 + a_chunk * 8 : m0 + a_row), a_fixed_limit = m;
  const int b_fixed = (kBTrans ? n0 + b_row : n0 + b_chunk * 8), b_fixed_limit = n;
  const T* const a_base = a + (kATrans ? static_cast<std::int64_t>(a_row) * lda + m0 + a_chunk * 8
                                       : static_cast<std::int64_t>(m0 + a_row) * lda + a_chunk * 8);
  const T* const b_base = b + (kBTrans ? static_cast<std::int64_t>(n0 + b_row) * ldb + b_chunk * 8
                                       : static_cast<std::int64_t>(b_row) * ldb + n0 + b_chunk * 8);
  const std::uint32_t a_store = static_cast<std::uint32_t>(swizzled<G::kAChunks>(a_row, a_chunk) * 2);
  const std::uint32_t b_store = static_cast<std::uint32_t>(swizzled<G::kBChunks>(b_row, b_chunk) * 2);
  const auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * BK;
    const std::uint32_t sa = smem_addr(smem_a + stage * G::kAStage) + a_store;
    const std::uint32_t sb = smem_addr(smem_b + stage * G::kBStage) + b_store;
    // Per pass p: the element's k and the fixed dimension's index, each against its limit.
    const T* src_a = a_base + (kATrans ? static_cast<std::int64_t>(k0) * lda : k0);
#pragma unroll
    for (int p = 0; p < G::kARows / kARowStep; ++p) {
      const int row_k = k0 + a_row + p * kARowStep, col_k = k0 + a_chunk * 8;
      const bool ok = kATrans ? row_k < k && a_fixed < a_fixed_limit
                              : a_fixed + p * kARowStep < a_fixed_limit && col_k < k;
      cp_async16(sa + p * kARowStep * G::kAChunks * 16, ok ? src_a : a, ok ? 16 : 0);
      src_a += static_cast<std::int64_t>(kARowStep) * lda;
    }
    const T* src_b = b_base + (kBTrans ? k0 : static_cast<std::int64_t>(k0) * ldb);
#pragma unroll
    for (int p = 0; p < G::kBRows / kBRowStep; ++p) {
      const int row_k = k0 + b_row + p * kBRowStep, col_k = k0 + b_chunk * 8;
      const bool ok = kBTrans ? b_fixed + p * kBRowStep < b_fixed_limit && col_k < k
                              : row_k < k && b_fixed < b_fixed_limit;
      cp_async16(sb + p * kBRowStep * G::kBChunks * 16, ok ? src_b : b, ok ? 16 : 0);
      src_b += static_cast<std::int64_t>(kBRowStep) * ldb;
    }
  };

  // The fragments of k-step kk of the tile in `stage`, the same matrices as mma_gemm_kernel's,
  // with the lane's swizzled offsets computed once. Where a k-step's 16 k's are two chunks of a
  // row (A untransposed, B^T), chunk kk * 2 + bit swizzles to (kk * 2) ^ (bit ^ row % 8): k-step
  // kk XORs the byte offset with kk * 32. Where they are 16 rows (A^T, B), k-step kk is kk * 16
  // rows further, the same row mod 8.
  constexpr std::uint32_t kAKStep = kATrans ? 16 * G::kAChunks * 16 : 32, kBKStep = kBTrans ? 32 : 16 * G::kBChunks * 16;
  // Untransposed A: one offset, m tile i being i * 16 rows further (the same row mod 8).
  std::uint32_t a_frag[kATrans ? G::kMTiles : 1], b_frag[G::kNTiles / 2];
  if constexpr (kATrans) {
#pragma unroll
    for (int i = 0; i < G::kMTiles; ++i)
      a_frag[i] = static_cast<std::uint32_t>(
          swizzled<G::kAChunks>(lane % 8 + (lane / 16) * 8, (warp_m0 + i * 16) / 8 + (lane / 8) % 2) * 2);
  } else {
    a_frag[0] = static_cast<std::uint32_t>(swizzled<G::kAChunks>(warp_m0 + lane % 16, lane / 16) * 2);
  }
#pragma unroll
  for (int j = 0; j < G::kNTiles / 2; ++j)
    b_frag[j] = static_cast<std::uint32_t>(
        (kBTrans ? swizzled<G::kBChunks>(warp_n0 + j * 16 + lane % 8 + (lane / 16) * 8, (lane / 8) % 2)
                 : swizzled<G::kBChunks>(lane % 8 + ((lane / 8) % 2) * 8, (warp_n0 + j * 16) / 8 + lane / 16)) *
        2);
  const auto load_frags = [&](std::uint32_t (&af)[G::kMTiles][4], std::uint32_t (&bf)[G::kNTiles / 2][4], int stage,
                              int kk) {
    const std::uint32_t sa = smem_addr(smem_a + stage * G::kAStage);
    const std::uint32_t sb = smem_addr(smem_b + stage * G::kBStage);
    const auto kk_u = static_cast<std::uint32_t>(kk);
#pragma unroll
    for (int i = 0; i < G::kMTiles; ++i) {
      if constexpr (kATrans) ldmatrix_x4_trans(af[i], sa + a_frag[i] + kk_u * kAKStep);
      else ldmatrix_x4(af[i], sa + ((a_frag[0] ^ (kk_u * kAKStep)) + i * 16 * G::kAChunks * 16));
    }
#pragma unroll
    for (int j = 0; j < G::kNTiles / 2; ++j) {
      if constexpr (kBTrans) ldmatrix_x4(bf[j], sb + (b_frag[j] ^ (kk_u * kBKStep)));
      else ldmatrix_x4_trans(bf[j], sb + b_frag[j] + kk_u * kBKStep);
    }
  };

  float acc[G::kMTiles][G::kNTiles][4];
#pragma unroll
  for (int i = 0; i < G::kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < G::kNTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();  // empty groups too: wait_group counts groups, not copies
  }
  cp_async_wait<STAGES - 2>();  // tile 0 has landed
  __syncthreads();

  std::uint32_t af[2][G::kMTiles][4];
  std::uint32_t bf[2][G::kNTiles / 2][4];
  int read_stage = 0, write_stage = STAGES - 1;
  load_frags(af[0], bf[0], read_stage, 0);

  for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      if (kk == kKSteps - 1) {
        // Tile kt + 1 must have landed before its first fragments are loaded below. Past the
        // last tile this reads a buffer no copy is writing, into fragments nothing uses.
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
          const int j = i % 2 == 0 ? jj : G::kNTiles - 1 - jj;  // serpentine: reuse the last B fragment
          const std::uint32_t b0 = bf[kk % 2][j / 2][(j % 2) * 2], b1 = bf[kk % 2][j / 2][(j % 2) * 2 + 1];
          MmaOp<T>::run(acc[i][j], af[kk % 2][i], b0, b1);
        }
    }
  }
  cp_async_wait<0>();  // no copy may outlive the block (the trailing groups are empty)

  const int g = lane / 4, t = lane % 4;
  const bool pairs_aligned = n % 2 == 0 && (reinterpret_cast<std::uintptr_t>(c) % 4) == 0;
#pragma unroll
  for (int i = 0; i < G::kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < G::kNTiles; ++j) {
      const int col = n0 + warp_n0 + j * 8 + 2 * t;
      if (col >= n) continue;
      const bool both = col + 1 < n;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp_m0 + i * 16 + g + h * 8;
        if (row >= m) continue;
        store_pair(c, static_cast<std::int64_t>(row) * n + col, acc[i][j][2 * h], acc[i][j][2 * h + 1], both,
                   both && pairs_aligned);
      }
    }
}

template <class T, int BM, int BN, int BK, int WM, int WN, int STAGES, bool kATrans = false, bool kBTrans = false>
cudaError_t launch_mma_gemm_fast(const T* a, const T* b, T* c, int m, int n, int k, std::int64_t lda,
                                 std::int64_t ldb, cudaStream_t stream) {
  using G = MmaGemm<T, BM, BN, BK, WM, WN, STAGES, kATrans, kBTrans>;
  const auto kernel = mma_gemm_fast_kernel<T, BM, BN, BK, WM, WN, STAGES, kATrans, kBTrans>;
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes);
  if (attr != cudaSuccess) return attr;
  const long long tiles = static_cast<long long>((m + BM - 1) / BM) * ((n + BN - 1) / BN);
  kernel<<<static_cast<unsigned>(tiles), G::kThreads, G::kSmemBytes, stream>>>(a, b, c, m, n, k, lda, ldb);
  return cudaGetLastError();
}

// Launches the kernel for C = A.B (contiguous C, rows of A and B 16-byte aligned), setting its
// shared-memory limit the first time (per process: one attribute serves every device alike).
// lda and ldb are the row strides of the operands as they lie in memory (of A^T, B^T when
// transposed).
template <class T, int BM, int BN, int BK, int WM, int WN, int STAGES, bool kATrans = false, bool kBTrans = false,
          Fault F = Fault::none>
cudaError_t launch_mma_gemm(const T* a, const T* b, T* c, int m, int n, int k, std::int64_t lda, std::int64_t ldb,
                            cudaStream_t stream) {
  using G = MmaGemm<T, BM, BN, BK, WM, WN, STAGES, kATrans, kBTrans, F>;
  const auto kernel = mma_gemm_kernel<T, BM, BN, BK, WM, WN, STAGES, kATrans, kBTrans, F>;
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes);
  if (attr != cudaSuccess) return attr;
  const long long tiles = static_cast<long long>((m + BM - 1) / BM) * ((n + BN - 1) / BN);
  kernel<<<static_cast<unsigned>(tiles), G::kThreads, G::kSmemBytes, stream>>>(a, b, c, m, n, k, lda, ldb);
  return cudaGetLastError();
}

}  // namespace kbench::gemm
