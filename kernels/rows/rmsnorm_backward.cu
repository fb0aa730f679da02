// rmsnorm backward: dx = rstd * (g - n * mean(g n)) + dh and dw = sum over rows of dy * n,
// with g = dy * w, n = h * rstd and rstd = rsqrt(mean(h^2) + eps) recomputed per row.
// Bytes: read h, dy, dh (rows x width each) and w, write dx and dw. Simple to fast:
//   eager (baseline): seven kernels, as a framework without fusion runs it: the row rstd, n and
//          g as float32 tensors, the row mean of g n, dx, and dw as a column sum (over chunks of
//          rows, then over the chunks).
//   resident (`single_block`): a persistent grid of as many blocks as fit the GPU at once;
//          each takes rows in turn with h and dy held in registers (one read of each, dh read
//          with them or at the write), and keeps dw for its columns across its rows, in
//          registers (4-vector kernels) or shared memory (a thread's columns are the same in
//          every row: a misaligned row is read element by element rather than split into a
//          head, vectors and a tail). At the end each block writes its dw partial (one row of
//          width floats), or on sm_90 each cluster of 8 blocks one, summed through distributed
//          shared memory; after a barrier across the grid its blocks add the partials in a
//          fixed order (`dw_*` variants: dw in shared memory, or a finalize kernel for the sum).
//   looped / split: wide rows. Kernel 1 sums h^2 and g h over each row (or row piece); kernel 2
//          takes a tile of columns over a group of rows, computes dx and the group's dw
//          partial for those columns; the finalize kernel adds the groups' partials in order.
//          Kernel 2 is launched overlapping kernel 1: it loads its w and waits inside for the
//          sums (looped_serial launches it after, the control).
//          On devices with clusters (sm_90), when every row gets a resident cluster and rows
//          are at most 131072 columns, the split plan is one kernel instead: a cluster of 8 or 16
//          blocks per row, the row in registers, its sums added through distributed shared
//          memory (`split_two_pass` runs the three kernels anyway).
// dw is summed in float32 in a fixed order everywhere (no float atomics), so its bits are the
// same from run to run on one GPU. When the weight is frozen (the case's `frozen` flag), dw is
// neither accumulated nor written and the finalize kernel does not run.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <map>
#include <optional>
#include <mutex>
#include <tuple>

#include "core/errors.hpp"
#include "kernels/common/grid.hpp"
#include "kernels/common/grid_barrier.cuh"
#include "kernels/common/launch_ex.cuh"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_device.cuh"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_launch.hpp"

namespace kbench::rows {

Op make_rmsnorm_backward_op();  // rmsnorm_backward_op.cpp

namespace {

// It holds h and dy (as softmax_backward holds y and dy): with its dw bookkeeping the 16-bit
// 4-vector kernels spilled at a 512-thread bound, so its kernels are bound to 256 threads, and
// float32 block plans take 8 vectors a thread to reach 2048 vectors (8192 columns) resident;
// 16-bit rows stay resident to 1024 vectors (8192 columns). Its 16-bit 8-vector warp kernels
// spilled at two blocks per SM (see kMinResidentBlocks), so rows of 129-256 vectors take a
// block of 4-vector threads instead, and float32 rows take 8 vectors a thread only past 1024,
// where 256 threads of 4 no longer hold the row (at 16384x1024 float32, 64 threads x 8
// vectors left half of each thread's registers empty: 100 us against rmsnorm's 73; and the
// outside grid, archive/grid/grid-20261201T180829Z-993950.json.gz, found 8 vectors losing to 4 at
// every float32 width of 1536-4096 and row count of 128-16384, 4096x4096 warm 86.36 us against
// 71.92, where the threshold was 256). Pieces of a split row keep two sums. The fit on two bfloat16
// grid runs of one H200 (archive/grid/grid-20261201T170738Z-0f4d00.json.gz, -170835Z-ed1be5.json;
// results/fit/fit-20261201T171132Z-73e2ec.json) moved the split only: every row count below the
// SMs splits past 8192 elements, as well as those below half of them past 8192 (held: the warp
// threshold, since the other row ops' rows past 8 per SM showed the warp winning, and what a
// bfloat16 grid cannot see: the float32-only eight_vectors_above and resident reach, and the
// chunks its fixed-tile looped plan ignores). Held-out mean regret 1.3% and 16 of 345 cells
// more than 10% off, against 2.4% and 25-26 before; most of the 16 are 513-1024 wide rows that
// a 64-thread block would run 15-25% faster than a warp (bfloat16 16x513, run 0f4d00: 7.09 us against 9.37).
// After the finalize's launch change those rows were 30 cells off, and the fit on two fresh runs
// (results/grid/grid-20261202T040603Z-6234f2.json, -040655Z-bc610c;
// results/fit/fit-20261202T055946Z-5067cc.json, warp_max_vecs held: past the grid's rows the
// other row ops' warps win) gives rows of more than 32 vectors a block below 8 rows per SM
// (warp_min_rows_per_sm): held-out mean regret 0.0%, no cell more than 10% off, against 1.7%
// and 30 (bfloat16 33x1024: 5.32 us in a block, 6.05 in a warp; at 1056 rows the warp wins,
// 1056x513: 11.43 us against 14.58).
constexpr RowRules kRules{.max_threads_4 = 256,
                          .max_threads_8 = 256,
                          .auto_resident_vecs = 2048,
                          .warp_eight_vectors = false,
                          .warp_min_rows_per_sm = 8,
                          .block_eight_vectors_f32 = true,
                          .eight_vectors_above = 1024,
                          .split_below_divisor = 1,
                          .split_all_sms_above_width = 32768,
                          .looped_chunk_sets_threads = false,  // its looped plan runs fixed tiles
                          .edges_as_scalars = false,  // a thread's columns are the same in every row
                          .split_piece_bytes = 2 * sizeof(float)};

// Two blocks of the resident kernel per SM at least (128 registers at 256 threads) where every
// row is whole aligned vectors: left to itself ptxas gave the 8-vector kernels 175-209
// registers, one block per SM, and an SM then waits through each row's reductions with nothing
// else in flight. The kernel for other rows reads element by element where it must, which
// takes more registers than that (it spilled at 128), so it keeps no second bound. (Three
// blocks, 80 registers, for the 4-vector kernels raised float16 4096x4096 from five blocks of
// 128 threads an SM to six and ran no faster: 42.40 us cupti against 41.98, two H200s,
// archive/sweep/sweep-20261201T234233Z-09597d.json.gz against
// results/sweep/sweep-20261201T233154Z-c86b3a.json. Occupancy does not bound it there.)
constexpr int kMinResidentBlocks = 2;

constexpr int kTileThreads = 256;  // looped and split: a column tile is kTileThreads x kTileCols
constexpr int kTileCols = 8;       // columns per thread, strided by kTileThreads
constexpr int kSumVecs = 4;        // vectors in flight per thread in the aligned sums kernel

struct Tensors {
  const void* h;
  std::int64_t h_stride;
  const void* w;
  const void* dy;
  std::int64_t dy_stride;
  const void* dh;  // null when the case has no dh
  std::int64_t dh_stride;
  void* dx;
};

template <class T>
__device__ __forceinline__ float at(const void* base, std::int64_t row, std::int64_t stride, int col) {
  return to_float(static_cast<const T*>(base)[row_offset(row, stride) + col]);
}

__device__ __forceinline__ float inverse_rms(float sum_squares, int width, float eps) {
  return rsqrtf(sum_squares / static_cast<float>(width) + eps);
}

// dx for one element: rstd g - h coef + dh, with coef = rstd^3 sum(g h) / width.
__device__ __forceinline__ float grad(float h, float g, float dh, float rstd, float coef) {
  return fmaf(rstd, g, fmaf(-h, coef, dh));
}

// ---- resident: a persistent grid, dw in registers --------------------------------------------

// Vector v of a row (elements v kVec .. v kVec + kVec - 1), whatever the row's alignment: one
// 16-byte load where the row allows it, else element by element, zeros past the width. A
// thread's columns are then the same in every row, strided or not, so its dw stays in
// registers across rows.
template <class T, Cache C, bool Aligned>
__device__ __forceinline__ uint4 load_cols(const T* row, int v, int width) {
  const T* p = row + v * kVec<T>;
  if constexpr (Aligned) return load16<T, C>(p, true);
  if (v * kVec<T> + kVec<T> <= width && aligned16(p)) return load16<T, C>(p, true);
  Vec16<T> r;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) r.v[j] = v * kVec<T> + j < width ? p[j] : from_float<T>(0.0f);
  return r.u;
}

// A thread's own 16 bytes of a row, copied to shared memory by cp.async (bypassing L1) while it
// goes on; the thread reads them back itself after stage_wait, so no barrier is needed. The
// "memory" clobbers keep the compiler from moving the shared-memory read above the wait.
__device__ __forceinline__ void stage16(uint4* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
               "l"(src)
               : "memory");
}
__device__ __forceinline__ void stage_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void stage_wait() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// Where a resident kernel takes dh: with h and dy into registers (up to 4 vectors a thread), or,
// for the 8-vector kernels at their register bound, staged in shared memory beside those loads
// (aligned rows only) or else loaded after the reductions. One rule for the kernel and for the
// host, which sizes the stage.
constexpr bool early_dh(bool with_dh, int k) { return with_dh && k <= 4; }
constexpr bool staged_dh(bool with_dh, int k, bool aligned) { return with_dh && !early_dh(with_dh, k) && aligned; }

template <class T, bool Aligned>
__device__ __forceinline__ void store_cols(T* row, int v, int width, const Vec16<T>& o) {
  T* p = row + v * kVec<T>;
  if (Aligned || (v * kVec<T> + kVec<T> <= width && aligned16(p))) {
    __stcs(reinterpret_cast<uint4*>(p), o.u);
  } else {
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j)
      if (v * kVec<T> + j < width) p[j] = o.v[j];
  }
}

// Where column c's dw lives in its slot. Aligned rows take 16-byte shared-memory accesses (a
// thread's columns are contiguous, so scalar accesses by a warp strode 4 or 8 floats apart and
// hit 4 or 8 times in the same banks); a 16-bit vector's 8 columns are two float4s, and
// side by side they would still stride 32 bytes (two wavefronts per quarter warp, ncu's
// "excessive wavefronts": 44% of the kernel's), so quarter q of vector v is float4 q nvec + v:
// a warp's accesses are contiguous. Other rows keep column order.
template <class T, bool Aligned>
__device__ __forceinline__ int dw_index(int c, int nvec) {
  if constexpr (Aligned && kVec<T> == 8) return (((c & 7) >> 2) * nvec + (c >> 3)) * 4 + (c & 3);
  else return c;
}

// dw += dy h rstd for the columns of vector v (laid out as dw_index says).
template <class T, bool Aligned>
__device__ __forceinline__ void add_dw(float* dw, int v, int nvec, int width, const float (&dyh)[kVec<T>], float rstd) {
  if constexpr (Aligned) {
    auto* d4 = reinterpret_cast<float4*>(dw);
#pragma unroll
    for (int q = 0; q < kVec<T> / 4; ++q) {
      float4& a = d4[q * nvec + v];
      a.x = fmaf(dyh[4 * q], rstd, a.x);
      a.y = fmaf(dyh[4 * q + 1], rstd, a.y);
      a.z = fmaf(dyh[4 * q + 2], rstd, a.z);
      a.w = fmaf(dyh[4 * q + 3], rstd, a.w);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j)
      if (v * kVec<T> + j < width) dw[v * kVec<T> + j] = fmaf(dyh[j], rstd, dw[v * kVec<T> + j]);
  }
}

// Sets the columns of vector v to `sums` (laid out as dw_index says): a thread that kept its
// columns' dw in registers writes them once, at the end.
template <class T, bool Aligned>
__device__ __forceinline__ void store_dw(float* dw, int v, int nvec, int width, const float (&sums)[kVec<T>]) {
  if constexpr (Aligned) {
    auto* d4 = reinterpret_cast<float4*>(dw);
#pragma unroll
    for (int q = 0; q < kVec<T> / 4; ++q)
      d4[q * nvec + v] = make_float4(sums[4 * q], sums[4 * q + 1], sums[4 * q + 2], sums[4 * q + 3]);
  } else {
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j)
      if (v * kVec<T> + j < width) dw[v * kVec<T> + j] = sums[j];
  }
}

// The resident kernel's dw partials. A block first folds its slots into slot 0 (column by
// column, slots in order). Unclustered, it writes that as its partial row. In a cluster of
// kDwCluster blocks (sm_90), rank q then sums columns slice q of every block's fold, ranks in
// order, through distributed shared memory, and writes the cluster's partial row: 8 times fewer
// partials for the finalize kernel to read (660 rows of 4096 floats at float16 4096x4096, written
// and read back, and the finalize took 6.2 of that case's 45.8 us in ncu; with the fold, 616
// blocks in 77 clusters, the case took 44.22 us, graph, run c86b3a: the resident kernel is the
// rest). Both orders are fixed, so dw's bits still repeat from run to run.
constexpr int kDwCluster = 8;

// Returns the number of partial rows the grid writes.
template <class T, bool Aligned>
__device__ __forceinline__ int write_dw_partial(float* dw_slots, int rows_per_block, int width, int nvec,
                                                float* partial) {
  __syncthreads();
  bool clustered = false;  // the host launches clusters of kDwCluster blocks or none
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  clustered = cluster.num_blocks() == kDwCluster;
#endif
  float* out = partial + static_cast<std::int64_t>(clustered ? blockIdx.x / kDwCluster : blockIdx.x) * width;
  for (int c = threadIdx.x; c < width; c += blockDim.x) {
    const int at = dw_index<T, Aligned>(c, nvec);
    float s = dw_slots[at];
    for (int i = 1; i < rows_per_block; ++i) s += dw_slots[i * width + at];
    if (clustered) dw_slots[at] = s;
    else out[c] = s;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (!clustered) return static_cast<int>(gridDim.x);
  cluster.sync();  // every block's fold is done (and visible: release/acquire)
  const int slice = (width + kDwCluster - 1) / kDwCluster;
  const int begin = static_cast<int>(cluster.block_rank()) * slice, end = min(width, begin + slice);
  for (int c = begin + threadIdx.x; c < end; c += blockDim.x) {
    const int at = dw_index<T, Aligned>(c, nvec);
    float v[kDwCluster];  // every remote load issued before the adds
#pragma unroll
    for (int q = 0; q < kDwCluster; ++q) v[q] = cluster.map_shared_rank(dw_slots, q)[at];
    float s = v[0];
#pragma unroll
    for (int q = 1; q < kDwCluster; ++q) s += v[q];
    out[c] = s;
  }
  cluster.sync();  // no block leaves while another still reads its shared memory
#endif
  return static_cast<int>(gridDim.x) / (clustered ? kDwCluster : 1);
}

// dw[c] = the sum of the `count` partial rows at column c, in a fixed order: a block takes a
// tile of `cols` columns (32, 16 or 8: 128, 64 or 32 bytes of each row), and its threads split
// into groups of `cols`, group i of the block's n adding rows i, i + n, ... (Kahan); then the
// groups' sums are added in group order. cols and n are fixed for a launch (the finalize
// kernel's cols is 32 and its n a function of count alone, finalize_warps; the resident
// kernel's, grid_sum_cols of its count, width and grid), so the order is too. The loads go
// kFinalizeBatch at a time ahead of the adds (the order of the adds stays the rows'): with 8
// warps and one load at a time the finalize kernel waited on L2 once per row, 11 us of the 47 us
// of float16 4096x4096 and 23 us at float32 16384x1024 (1320 partials), in ncu; 32 warps and 8
// loads took 6.2 and 5.7 us. `sums` is the block's scratch, [column][group]; the caller syncs
// before reusing it.
constexpr int kFinalizeMaxWarps = 32;
constexpr int kFinalizeBatch = 8;

template <class T, int MaxGroups>
__device__ __forceinline__ void sum_partial_tile(const float* partial, int count, int width, int tile, int cols,
                                                 float (&sums)[32][MaxGroups + 1], T* dw) {
  const int lane = threadIdx.x % cols, group = threadIdx.x / cols, groups = blockDim.x / cols;
  const int c = tile * cols + lane;
  KahanSum acc;
  if (c < width) {
    const float* column = partial + c;
    const auto at_row = [&](int g) { return __ldcg(column + static_cast<std::int64_t>(g) * width); };
    // A batch past the last row is predicated, not a loop of its own: with 77 partials and 16
    // warps every warp has 4-5 rows, and a remainder loop of one load at a time waited on L2
    // for each (the finalize took 4.54 of float16 4096x4096's 44 us in ncu).
    for (int g = group; g < count; g += kFinalizeBatch * groups) {
      float v[kFinalizeBatch];
#pragma unroll
      for (int u = 0; u < kFinalizeBatch; ++u) v[u] = g + u * groups < count ? at_row(g + u * groups) : 0.0f;
#pragma unroll
      for (int u = 0; u < kFinalizeBatch; ++u)
        if (g + u * groups < count) acc.add(v[u]);  // the rows' order, as before: the same bits
    }
  }
  sums[lane][group] = acc.value();
  __syncthreads();
  if (group == 0 && c < width) {
    float s = 0.0f;
    for (int i = 0; i < groups; ++i) s += sums[lane][i];
    dw[c] = from_float<T>(s);
  }
}

// The resident kernel's tile width for its grid sum: the widest of 32, 16 and 8 columns at which
// a thread's rows are one batch of loads, while the grid still takes every tile at once. At
// float16 4096x4096 (62 partial rows, 128 threads, 496 blocks) 32 columns left 368 of the blocks
// idle and gave each thread two batches, one L2 round trip after the other; 16 columns use 256
// blocks, one batch each. Measured with the barrier of one atomic a block against session 27's
// end (an H100, results/sweep/sweep-20261206T195317Z-fdccfe.json): 0.2-0.8 us ahead in the grid
// sum beside shared memory, within 0.4 us either way beside registers; auto's ways unchanged.
__device__ __forceinline__ int grid_sum_cols(int count, int width) {
  int cols = 32;
  const auto batches = [&](int k) {
    const int rows_a_batch = kFinalizeBatch * static_cast<int>(blockDim.x) / k;
    return (count + rows_a_batch - 1) / rows_a_batch;
  };
  const auto tiles = [&](int k) { return (width + k - 1) / k; };
  while (cols > 8 && batches(cols) > 1 && tiles(cols / 2) <= static_cast<int>(gridDim.x)) cols /= 2;
  return cols;
}

// dw: each thread owns its columns' entries (a thread's columns are the same in every row), so
// no ordering between threads is needed and the sums are the same from run to run. Where they
// live while the rows go by (DwRegs):
//   registers: a thread's K x kVec floats, written once into the block's slots at the end;
//   shared memory: one float per column (and per row slot of a warp-plan block), read and
//     written per row (the 8-vector kernels keep this: beside h and dy in registers they took
//     over 200 registers, one block per SM).
// At the end the slots are folded into partial rows (write_dw_partial), and those are summed
// into dw (GridSum):
//   by this kernel, after a barrier across the grid (it is resident at once: resident_grid),
//     each block taking tiles of grid_sum_cols columns: no second kernel, no wait for this one's end;
//   by the finalize kernel after it.
// `partial` is gridDim.x x width floats, null when the weight is frozen; `barrier`, GridSum's
// counters; `dw_out`, dw (T) for GridSum.
template <class T, int K, bool WithDh, bool WithDw, bool Aligned, bool DwRegs, bool GridSum>
__global__ void __launch_bounds__(kRules.max_threads(K), Aligned ? kMinResidentBlocks : 1)
    rmsnorm_bwd_resident_kernel(Tensors t, std::int64_t rows, int width, int lanes, float eps, float* partial,
                                void* dw_out, unsigned* barrier) {
  static_assert(WithDw || (!DwRegs && !GridSum), "the dw flags apply when dw is computed");
  extern __shared__ float dw_slots[];  // rows per block x width floats when WithDw, then dh's stage
  __shared__ float2 scratch[32];
  // The grid is resident from the start, so the finalize kernel may be launched now: its blocks
  // take SMs as this kernel's leave and wait there for the partials.
  if constexpr (WithDw && !GridSum) trigger_next_grid();
  wait_for_previous_grid();  // launched overlapping a step's forward (LaunchArgs::overlap_previous): h first
  // dh is loaded with h and dy, so that a row costs one trip to memory, not two. The 8-vector
  // kernels have no registers for it at their bound: with aligned rows they copy it to shared
  // memory (dh_stage, a row of vectors per slot) beside those loads and read it back after the
  // reductions; otherwise they load it after the reductions, a second trip.
  constexpr bool kEarlyDh = early_dh(WithDh, K);
  constexpr bool kStagedDh = staged_dh(WithDh, K, Aligned);
  const int shift = __ffs(lanes) - 1;
  const int rows_per_block = blockDim.x >> shift, slot = threadIdx.x >> shift, lane = threadIdx.x & (lanes - 1);
  const int nvec = (width + kVec<T> - 1) / kVec<T>;
  // Aligned rows are whole vectors, so the dw slots end on a 16-byte boundary.
  uint4* dh_stage = reinterpret_cast<uint4*>(dw_slots + (WithDw ? rows_per_block * width : 0)) + slot * nvec;
  // w is read per row, twice (for sum g h, then for dx), from L1, rather than held across the
  // reductions.
  const T* w = static_cast<const T*>(t.w);
  float* dw = dw_slots + slot * width;
  float dw_regs[DwRegs ? K : 1][kVec<T>] = {};
  if constexpr (WithDw && !DwRegs) {
    for (int c = threadIdx.x; c < rows_per_block * width; c += blockDim.x) dw_slots[c] = 0.0f;
    // Each thread zeroes and then owns its own columns' entries; the barrier is for the
    // zeroing, which strides over all of them.
    __syncthreads();
  }

  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * rows_per_block; base < rows;
       base += static_cast<std::int64_t>(gridDim.x) * rows_per_block) {
    const std::int64_t row = base + slot;
    const bool active = row < rows;
    const std::int64_t r = active ? row : rows - 1;  // an idle slot reads the last row and keeps nothing
    const T* hr = static_cast<const T*>(t.h) + row_offset(r, t.h_stride);
    const T* dyr = static_cast<const T*>(t.dy) + row_offset(r, t.dy_stride);
    const T* dhr = WithDh ? static_cast<const T*>(t.dh) + row_offset(r, t.dh_stride) : nullptr;
    uint4 hv[K], dyv[K], dhv[kEarlyDh ? K : 1];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int v = lane + k * lanes;
      hv[k] = v < nvec ? load_cols<T, Cache::normal, Aligned>(hr, v, width) : make_uint4(0, 0, 0, 0);
      dyv[k] = v < nvec ? load_cols<T, Cache::normal, Aligned>(dyr, v, width) : make_uint4(0, 0, 0, 0);
      if constexpr (kEarlyDh) dhv[k] = v < nvec ? load_cols<T, Cache::last_use, Aligned>(dhr, v, width) : make_uint4(0, 0, 0, 0);
      if constexpr (kStagedDh)
        if (v < nvec) stage16(dh_stage + v, dhr + v * kVec<T>);
    }
    if constexpr (kStagedDh) stage_commit();
    float ss = 0.0f, sg = 0.0f;  // sum h^2 and sum g h; zero bits are +0 in every dtype
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int v = lane + k * lanes;
      const uint4 wv = v < nvec ? load_cols<T, Cache::normal, Aligned>(w, v, width) : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int j = 0; j < kVec<T>; ++j) {
        const float h = elem<T>(hv[k], j);
        ss = fmaf(h, h, ss);
        sg = fmaf(elem<T>(dyv[k], j) * elem<T>(wv, j), h, sg);
      }
    }
    const float2 sums = row_reduce_sums(make_float2(ss, sg), lanes, scratch);
    const float rstd = inverse_rms(sums.x, width, eps);
    const float coef = rstd * rstd * rstd * sums.y / static_cast<float>(width);
    // Only the packed vectors live across the reductions (see keep_packed).
#pragma unroll
    for (int k = 0; k < K; ++k) {
      keep_packed(hv[k]);
      keep_packed(dyv[k]);
      if constexpr (kEarlyDh) keep_packed(dhv[k]);
    }
    if constexpr (kStagedDh) stage_wait();  // before the next row's copies reuse the stage, too
    if (!active) continue;

    T* dxr = static_cast<T*>(t.dx) + row_offset(r, width);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int v = lane + k * lanes;
      if (v >= nvec) continue;
      uint4 dh = make_uint4(0, 0, 0, 0);
      if constexpr (kEarlyDh) dh = dhv[k];
      else if constexpr (kStagedDh) dh = dh_stage[v];
      else if constexpr (WithDh) dh = load_cols<T, Cache::last_use, Aligned>(dhr, v, width);
      const uint4 wv = load_cols<T, Cache::normal, Aligned>(w, v, width);
      Vec16<T> o;
      float dyh[kVec<T>];
#pragma unroll
      for (int j = 0; j < kVec<T>; ++j) {
        const float h = elem<T>(hv[k], j), dy = elem<T>(dyv[k], j);
        o.v[j] = from_float<T>(grad(h, dy * elem<T>(wv, j), WithDh ? elem<T>(dh, j) : 0.0f, rstd, coef));
        dyh[j] = dy * h;
      }
      store_cols<T, Aligned>(dxr, v, width, o);
      if constexpr (WithDw && DwRegs) {
#pragma unroll
        for (int j = 0; j < kVec<T>; ++j) dw_regs[k][j] = fmaf(dyh[j], rstd, dw_regs[k][j]);
      } else if constexpr (WithDw) {
        add_dw<T, Aligned>(dw, v, nvec, width, dyh, rstd);
      }
    }
  }
  if constexpr (WithDw) {
    if constexpr (DwRegs) {
      // Every column below the width is owned by one thread of each slot: no zeros needed.
#pragma unroll
      for (int k = 0; k < K; ++k)
        if (lane + k * lanes < nvec) store_dw<T, Aligned>(dw, lane + k * lanes, nvec, width, dw_regs[k]);
    }
    const int count = write_dw_partial<T, Aligned>(dw_slots, rows_per_block, width, nvec, partial);
    if constexpr (GridSum) {
      __shared__ float sums[32][kRules.max_threads(K) / 8 + 1];
      grid_barrier(barrier, gridDim.x);
      const int cols = grid_sum_cols(count, width);
      for (int tile = blockIdx.x; tile * cols < width; tile += gridDim.x) {
        sum_partial_tile<T, kRules.max_threads(K) / 8>(partial, count, width, tile, cols, sums, static_cast<T*>(dw_out));
        __syncthreads();  // group 0 has read `sums` before the next tile writes it
      }
    }
  }
}

// ---- looped and split: row sums, then column tiles over row groups --------------------------

// Kernel 1: block b sums h^2 and g h over piece b % segments of row b / segments. Aligned rows
// are read a vector at a time (pieces are whole warp-steps of vectors: RowPlan::segment);
// element by element, 16-bit rows took 2-byte loads and the plan ran at half torch.compile's
// speed at 64x131072.
template <class T, bool Aligned>
__global__ void __launch_bounds__(kTileThreads) rmsnorm_bwd_sums_kernel(Tensors t, float2* sums, int width,
                                                                        int segments, int segment) {
  __shared__ float scratch[32];
  trigger_next_grid();  // the tile kernel's blocks may take the SMs this grid's last wave leaves
  wait_for_previous_grid();  // launched overlapping a step's forward (LaunchArgs::overlap_previous): h first
  const std::int64_t row = blockIdx.x / segments;
  const int begin = (blockIdx.x % segments) * segment, end = min(begin + segment, width);
  KahanSum ss, sg;
  if constexpr (Aligned) {
    const T* hr = static_cast<const T*>(t.h) + row_offset(row, t.h_stride);
    const T* dyr = static_cast<const T*>(t.dy) + row_offset(row, t.dy_stride);
    const T* w = static_cast<const T*>(t.w);
    for (int v0 = begin / kVec<T> + threadIdx.x; v0 < end / kVec<T>; v0 += kTileThreads * kSumVecs) {
      uint4 hv[kSumVecs], dyv[kSumVecs], wv[kSumVecs];
#pragma unroll
      for (int k = 0; k < kSumVecs; ++k) {
        const int v = v0 + k * kTileThreads;
        if (v < end / kVec<T>) {
          hv[k] = load16<T, Cache::normal>(hr + v * kVec<T>, true);
          dyv[k] = load16<T, Cache::normal>(dyr + v * kVec<T>, true);
          wv[k] = load16<T, Cache::normal>(w + v * kVec<T>, true);
        }
      }
      float a = 0.0f, b = 0.0f;
#pragma unroll
      for (int k = 0; k < kSumVecs; ++k)
        if (v0 + k * kTileThreads < end / kVec<T>)
#pragma unroll
          for (int j = 0; j < kVec<T>; ++j) {
            const float h = elem<T>(hv[k], j);
            a = fmaf(h, h, a);
            b = fmaf(elem<T>(dyv[k], j) * elem<T>(wv[k], j), h, b);
          }
      ss.add(a);
      sg.add(b);
    }
  } else {
    for (int c0 = begin + threadIdx.x; c0 < end; c0 += kTileThreads * kTileCols) {
      float a = 0.0f, b = 0.0f;
#pragma unroll
      for (int i = 0; i < kTileCols; ++i) {
        const int c = c0 + i * kTileThreads;
        if (c >= end) break;
        const float h = at<T>(t.h, row, t.h_stride, c);
        a = fmaf(h, h, a);
        b = fmaf(at<T>(t.dy, row, t.dy_stride, c) * to_float(static_cast<const T*>(t.w)[c]), h, b);
      }
      ss.add(a);
      sg.add(b);
    }
  }
  const float s0 = block_reduce(ss.value(), scratch, SumOp{});
  const float s1 = block_reduce(sg.value(), scratch, SumOp{});
  if (threadIdx.x == 0) sums[blockIdx.x] = make_float2(s0, s1);
}

// rstd and coef of a row from its pieces' sums (kernel 1), added in piece order: every tile
// of the row gets the same bits.
struct RowCoefficients {
  float rstd, coef;
};

__device__ __forceinline__ RowCoefficients row_coefficients(const float2* sums, std::int64_t row, int segments,
                                                            int width, float eps) {
  float ss = 0.0f, sg = 0.0f;
  for (int s = 0; s < segments; ++s) {
    const float2 p = sums[row * segments + s];
    ss += p.x;
    sg += p.y;
  }
  const float rstd = inverse_rms(ss, width, eps);
  return {rstd, rstd * rstd * rstd * sg / static_cast<float>(width)};
}

// Kernel 2: block (tile, group) computes dx for its columns over the group's rows, and the
// group's dw partial for them (partial: groups x width, null when frozen).
template <class T, bool WithDh, bool WithDw>
__global__ void __launch_bounds__(kTileThreads)
    rmsnorm_bwd_tile_kernel(Tensors t, const float2* sums, float* partial, std::int64_t rows, int width,
                            int segments, std::int64_t rows_per_group, float eps) {
  const int c0 = blockIdx.x * (kTileThreads * kTileCols) + threadIdx.x;
  const std::int64_t first = blockIdx.y * rows_per_group, last = min(rows, first + rows_per_group);
  float w[kTileCols], dw[kTileCols] = {};
#pragma unroll
  for (int i = 0; i < kTileCols; ++i) {
    const int c = c0 + i * kTileThreads;
    w[i] = c < width ? to_float(static_cast<const T*>(t.w)[c]) : 0.0f;
  }
  wait_for_previous_grid();  // launched overlapping the sums kernel: w is loaded, the sums are next
  for (std::int64_t row = first; row < last; ++row) {
    const auto [rstd, coef] = row_coefficients(sums, row, segments, width, eps);
    T* dxr = static_cast<T*>(t.dx) + row_offset(row, width);
#pragma unroll
    for (int i = 0; i < kTileCols; ++i) {
      const int c = c0 + i * kTileThreads;
      if (c >= width) break;
      const float h = at<T>(t.h, row, t.h_stride, c), dy = at<T>(t.dy, row, t.dy_stride, c);
      const float dh = WithDh ? at<T>(t.dh, row, t.dh_stride, c) : 0.0f;
      dxr[c] = from_float<T>(grad(h, dy * w[i], dh, rstd, coef));
      if constexpr (WithDw) dw[i] = fmaf(dy * h, rstd, dw[i]);
    }
  }
  if constexpr (WithDw)
#pragma unroll
    for (int i = 0; i < kTileCols; ++i) {
      const int c = c0 + i * kTileThreads;
      if (c < width) partial[blockIdx.y * static_cast<std::int64_t>(width) + c] = dw[i];
    }
}

// Kernel 2 for aligned rows: thread t of tile b takes vector b kTileThreads + t of each row (a
// tile is kTileThreads vectors wide), 16-byte loads and stores, and the group's dw partial of
// its kVec columns.
template <class T, bool WithDh, bool WithDw>
__global__ void __launch_bounds__(kTileThreads)
    rmsnorm_bwd_tile_vec_kernel(Tensors t, const float2* sums, float* partial, std::int64_t rows, int width,
                                int segments, std::int64_t rows_per_group, float eps) {
  const int v = blockIdx.x * kTileThreads + threadIdx.x;
  if (v >= width / kVec<T>) return;  // no barrier below
  const std::int64_t first = blockIdx.y * rows_per_group, last = min(rows, first + rows_per_group);
  const uint4 wv = load16<T, Cache::normal>(static_cast<const T*>(t.w) + v * kVec<T>, true);
  wait_for_previous_grid();  // launched overlapping the sums kernel: w is loaded, the sums are next
  float dw[kVec<T>] = {};
  for (std::int64_t row = first; row < last; ++row) {
    const auto [rstd, coef] = row_coefficients(sums, row, segments, width, eps);
    const std::int64_t e = v * kVec<T>;
    const uint4 hv = load16<T, Cache::last_use>(static_cast<const T*>(t.h) + row_offset(row, t.h_stride) + e, true);
    const uint4 dyv = load16<T, Cache::last_use>(static_cast<const T*>(t.dy) + row_offset(row, t.dy_stride) + e, true);
    uint4 dhv = make_uint4(0, 0, 0, 0);
    if constexpr (WithDh) dhv = load16<T, Cache::last_use>(static_cast<const T*>(t.dh) + row_offset(row, t.dh_stride) + e, true);
    Vec16<T> o;
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) {
      const float h = elem<T>(hv, j), dy = elem<T>(dyv, j);
      o.v[j] = from_float<T>(grad(h, dy * elem<T>(wv, j), WithDh ? elem<T>(dhv, j) : 0.0f, rstd, coef));
      if constexpr (WithDw) dw[j] = fmaf(dy * h, rstd, dw[j]);
    }
    __stcs(reinterpret_cast<uint4*>(static_cast<T*>(t.dx) + row_offset(row, width) + e), o.u);
  }
  if constexpr (WithDw)
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) partial[blockIdx.y * static_cast<std::int64_t>(width) + v * kVec<T> + j] = dw[j];
}

// ---- split on sm_90: one kernel, a cluster per row -----------------------------------------

// The two-pass split above is three dependent kernels, and at few rows their latencies are the
// time (bfloat16 4x32769: 19.7 us in graph mode, torch.compile's backward 17.1 and rmsnorm's own
// split forward 6.7; archive/sweep/sweep-20261202T020526Z-e8de61.json.gz). Here a cluster of
// S blocks takes one row (S = 8, or 16 for rows past 65536 columns): block `rank` holds
// columns (k S + rank) kClusterThreads + thread, k < E, of h and dy in registers, the row's two
// sums are added block by block through distributed shared memory (ranks in order, the same
// bits in every block), and dx is written from the registers: one trip to memory. dw's terms of
// the row are written as dw when there is one row, else as the row's partial, which the
// finalize kernel adds in row order.
//
// One row a cluster only, so every row is in flight at once: the host runs the two-pass split
// where the rows outnumber the resident clusters. A cluster that walked several rows in turn
// waited out each row's load latency (about 4.5 us a row, 8 rows a cluster): 64x131072 16-bit
// took 54.3 us against the two-pass 36.4 (archive/sweep/sweep-20261202T154631Z-ea58c8.json.gz).
constexpr int kClusterThreads = 512;
// Columns per thread the cluster kernel is built for: a row of up to E x S x kClusterThreads
// columns (16384, 32768, 65536 with S = 8; twice that with 16, which H200 allows as a
// non-portable size); wider rows take the two-pass split.
constexpr int kClusterCols[] = {4, 8, 16};
constexpr int kWideRowCluster = 16;
constexpr std::int64_t kClusterMaxWidth = std::int64_t{kClusterCols[2]} * kWideRowCluster * kClusterThreads;

template <class T, int S, int E, bool WithDh, bool WithDw>
__global__ void __launch_bounds__(kClusterThreads)
    rmsnorm_bwd_cluster_kernel(Tensors t, std::int64_t rows, int width, float eps, float* partial, T* dw_out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ float2 scratch[32];
  __shared__ float2 block_sums;
  const int rank = static_cast<int>(cluster.block_rank()), lane = threadIdx.x & 31;
  const std::int64_t row = blockIdx.x / S;
  if constexpr (WithDw) trigger_next_grid();  // the finalize, where there is one, waits inside
  wait_for_previous_grid();  // launched overlapping a step's forward (LaunchArgs::overlap_previous): h first
  const auto column = [&](int k) { return (k * S + rank) * kClusterThreads + static_cast<int>(threadIdx.x); };
  // w is read twice (a row of it, from L1 or L2 the second time) rather than held: registers
  // decide how many clusters are resident, and so how many rows this kernel takes.
  const auto w = [&](int k) { return to_float(static_cast<const T*>(t.w)[column(k)]); };
  float h[E], dy[E], dh[WithDh ? E : 1];
#pragma unroll
  for (int k = 0; k < E; ++k) {
    const bool in = column(k) < width;
    h[k] = in ? at<T>(t.h, row, t.h_stride, column(k)) : 0.0f;
    dy[k] = in ? at<T>(t.dy, row, t.dy_stride, column(k)) : 0.0f;
    if constexpr (WithDh) dh[k] = in ? at<T>(t.dh, row, t.dh_stride, column(k)) : 0.0f;
  }
  float ss = 0.0f, sg = 0.0f;
#pragma unroll
  for (int k = 0; k < E; ++k) {
    ss = fmaf(h[k], h[k], ss);
    if (column(k) < width) sg = fmaf(dy[k] * w(k), h[k], sg);
  }
  const float2 mine = row_reduce_sums(make_float2(ss, sg), kClusterThreads, scratch);
  if (threadIdx.x == 0) block_sums = mine;
  cluster.sync();  // every block's sums written and visible (release / acquire)
  // Lane q of each warp reads rank q's sums; every lane then adds them in rank order.
  float2 theirs = make_float2(0.0f, 0.0f);
  if (lane < S) theirs = *cluster.map_shared_rank(&block_sums, lane);
  float total_ss = 0.0f, total_sg = 0.0f;
#pragma unroll
  for (int q = 0; q < S; ++q) {
    total_ss += __shfl_sync(0xffffffffu, theirs.x, q);
    total_sg += __shfl_sync(0xffffffffu, theirs.y, q);
  }
  const float rstd = inverse_rms(total_ss, width, eps);
  const float coef = rstd * rstd * rstd * total_sg / static_cast<float>(width);
  T* dxr = static_cast<T*>(t.dx) + row_offset(row, width);
#pragma unroll
  for (int k = 0; k < E; ++k) {
    if (column(k) >= width) continue;
    dxr[column(k)] = from_float<T>(grad(h[k], dy[k] * w(k), WithDh ? dh[WithDh ? k : 0] : 0.0f, rstd, coef));
    if constexpr (WithDw) {  // the row's term of dw, dy n
      const float term = dy[k] * h[k] * rstd;
      if (rows == 1) dw_out[column(k)] = from_float<T>(term);
      else partial[row * width + column(k)] = term;
    }
  }
  cluster.sync();  // no block leaves while another may still read its sums
#endif
}

// Enough warps for a batch of rows each, up to 32: the two-pass plans have a few partials
// over wide rows, where 32 warps a block (mostly idle) made 64x131072 9 us slower.
int finalize_warps(std::int64_t count) {
  int warps = 1;
  while (warps < kFinalizeMaxWarps && static_cast<std::int64_t>(warps) * kFinalizeBatch < count) warps *= 2;
  return warps;
}

template <class T>
__global__ void __launch_bounds__(kFinalizeMaxWarps * 32)
    rmsnorm_bwd_finalize_kernel(const float* partial, int count, int width, T* dw) {
  __shared__ float sums[32][kFinalizeMaxWarps + 1];  // padded: no bank conflicts
  wait_for_previous_grid();  // launched overlapping the kernel that writes the partials
  sum_partial_tile<T, kFinalizeMaxWarps>(partial, count, width, static_cast<int>(blockIdx.x), 32, sums, dw);
}

// ---- eager: seven kernels -------------------------------------------------------------------

enum class EagerReduce { rstd, mean_gn };

// A block per row: out[row] = rsqrt(mean(h^2) + eps), or mean(g n) of the float32 g and n.
template <class T, EagerReduce R>
__global__ void __launch_bounds__(256) rmsnorm_bwd_eager_reduce_kernel(Tensors t, const float* g, const float* n,
                                                                        float* out, int width, float eps) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  KahanSum acc;
  for (int c = threadIdx.x; c < width; c += blockDim.x) {
    if constexpr (R == EagerReduce::rstd) {
      const float h = at<T>(t.h, row, t.h_stride, c);
      acc.add(h * h);
    } else {
      acc.add(g[row * width + c] * n[row * width + c]);
    }
  }
  const float s = block_reduce(acc.value(), scratch, SumOp{}) / static_cast<float>(width);
  if (threadIdx.x == 0) out[row] = R == EagerReduce::rstd ? rsqrtf(s + eps) : s;
}

enum class EagerMap { n, g, dx };

// Elementwise over every row: n = h rstd, g = dy w (both float32), dx = rstd (g - n m) + dh.
template <class T, EagerMap M>
__global__ void __launch_bounds__(256) rmsnorm_bwd_eager_map_kernel(Tensors t, const float* rstd, const float* m,
                                                                     float* g, float* n, std::int64_t rows, int width) {
  const std::int64_t count = rows * width;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / width;
    const int c = static_cast<int>(i % width);
    if constexpr (M == EagerMap::n) n[i] = at<T>(t.h, row, t.h_stride, c) * rstd[row];
    if constexpr (M == EagerMap::g) g[i] = at<T>(t.dy, row, t.dy_stride, c) * to_float(static_cast<const T*>(t.w)[c]);
    if constexpr (M == EagerMap::dx) {
      const float dh = t.dh ? at<T>(t.dh, row, t.dh_stride, c) : 0.0f;
      static_cast<T*>(t.dx)[i] = from_float<T>(rstd[row] * (g[i] - n[i] * m[row]) + dh);
    }
  }
}

// dw's partial over a chunk of rows: partial[chunk][c] = sum over the chunk's rows of dy n, a
// column per thread, rows in order (the framework's split column sum; the finalize kernel
// adds the chunks).
template <class T>
__global__ void __launch_bounds__(256) rmsnorm_bwd_eager_dw_kernel(Tensors t, const float* n, float* partial,
                                                                   std::int64_t rows, int width, std::int64_t chunk) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= width) return;
  const std::int64_t first = blockIdx.y * chunk, last = min(rows, first + chunk);
  KahanSum acc;
  for (std::int64_t row = first; row < last; ++row) acc.add(at<T>(t.dy, row, t.dy_stride, c) * n[row * width + c]);
  partial[blockIdx.y * static_cast<std::int64_t>(width) + c] = acc.value();
}

// ---- launchers -------------------------------------------------------------------------------

bool has_dh(const Case& c) { return c.param("dh") != 0; }
bool with_dw(const Case& c) { return c.param("frozen") == 0; }

Tensors tensors(const LaunchArgs& a) {
  const bool dh = has_dh(a.c);
  return Tensors{a.inputs[0].data, a.inputs[0].row_stride, a.inputs[1].data, a.inputs[2].data, a.inputs[2].row_stride,
                 dh ? a.inputs[3].data : nullptr, dh ? a.inputs[3].row_stride : 0, a.outputs[0].data};
}

// h, dy and dh are [rows, width] views, w one row of width; dx contiguous [rows, width], dw one
// row of width.
RowGeometry checked_geometry(const LaunchArgs& a) {
  const std::int64_t rows = rows_of(a.c), width = cols_of(a.c);
  check_row_tensor((a.c.op + " input h").c_str(), a.inputs[0], rows, width, false);
  check_row_tensor((a.c.op + " input w").c_str(), a.inputs[1], 1, width, true);
  check_row_tensor((a.c.op + " input dy").c_str(), a.inputs[2], rows, width, false);
  if (has_dh(a.c)) check_row_tensor((a.c.op + " input dh").c_str(), a.inputs[3], rows, width, false);
  check_row_tensor((a.c.op + " output dx").c_str(), a.outputs[0], rows, width, true);
  if (with_dw(a.c)) check_row_tensor((a.c.op + " output dw").c_str(), a.outputs[1], 1, width, true);
  return {rows, width, a.inputs[0].row_stride};
}

// The resident kernel's grid: as many blocks as the GPU holds at once (its occupancy for this
// launch), never more than the row groups. With `fold` (dw is computed) and where the device
// has clusters and the groups fill at least one: whole clusters of kDwCluster, as many as are
// resident at once (a cluster lives in one GPC, so that can be fewer than the occupancy says).
struct ResidentGrid {
  unsigned blocks;
  unsigned cluster;  // 1: no cluster launch
};

template <class Kernel>
ResidentGrid resident_grid(Kernel kernel, int threads, std::size_t shared, std::int64_t row_groups, bool fold,
                           unsigned cluster = kDwCluster) {
  struct Occupancy {
    int blocks_per_sm, clusters;  // clusters: resident clusters of `cluster` blocks, 0 without them
  };
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, std::size_t, unsigned, int>, Occupancy> known;  // per kernel, shape, device
  int device = 0;
  KB_CUDA(cudaGetDevice(&device));
  Occupancy o{};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), threads, shared, cluster, device);
    auto it = known.find(key);
    if (it == known.end()) {
      // Past the default 48 KiB (the float32 8-vector kernels' dw slots and dh stage) a kernel
      // must opt in; to the device's limit, so that any width's launch may follow. The limit
      // bounds the dynamic and static shared memory together: asking for all of it as dynamic
      // is refused (cudaErrorInvalidValue, session 31 on an H100).
      if (shared > 48 * 1024) {
        cudaFuncAttributes fa{};
        KB_CUDA(cudaFuncGetAttributes(&fa, kernel));
        const int room = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device) - static_cast<int>(fa.sharedSizeBytes);
        KB_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, room));
      }
      KB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o.blocks_per_sm, kernel, threads, shared));
      if (device_attribute(cudaDevAttrClusterLaunch, device) != 0) {  // 0: the unclustered grid serves
        if (cluster > 8) KB_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        o.clusters = resident_clusters(kernel, cluster, static_cast<unsigned>(threads), shared);
      }
      it = known.emplace(key, o).first;
    }
    o = it->second;
  }
  const std::int64_t full = static_cast<std::int64_t>(std::max(o.blocks_per_sm, 1)) * current_device_limits().sms;
  if (fold && o.clusters > 0 && row_groups >= cluster) {
    const std::int64_t clusters = std::min<std::int64_t>(o.clusters, (row_groups + cluster - 1) / cluster);
    return {static_cast<unsigned>(clusters * cluster), cluster};
  }
  return {static_cast<unsigned>(std::max<std::int64_t>(1, std::min(full, row_groups))), 1};
}

// The cluster kernel (the split plan on devices with clusters, rows up to kClusterMaxWidth):
// E (columns a thread) the fewest that hold the row, a cluster per row. kernel is null where the
// two-pass split runs instead: wider rows, or more rows than clusters resident at once.
template <class T>
struct ClusterLaunch {
  void (*kernel)(Tensors, std::int64_t, int, float, float*, T*) = nullptr;
  unsigned size = 0;  // blocks a cluster
};

template <class T, int S, int E>
auto cluster_kernel(bool dh, bool dw) {
  return dh ? (dw ? rmsnorm_bwd_cluster_kernel<T, S, E, true, true> : rmsnorm_bwd_cluster_kernel<T, S, E, true, false>)
            : (dw ? rmsnorm_bwd_cluster_kernel<T, S, E, false, true> : rmsnorm_bwd_cluster_kernel<T, S, E, false, false>);
}

template <class T>
ClusterLaunch<T> cluster_launch(const Case& c) {
  const std::int64_t rows = rows_of(c), width = cols_of(c);
  if (rows == 0 || width > kClusterMaxWidth) return {};
  ClusterLaunch<T> l;
  l.size = width > std::int64_t{kClusterCols[2]} * kDwCluster * kClusterThreads ? kWideRowCluster : kDwCluster;
  const std::int64_t cols = (width + l.size * kClusterThreads - 1) / (l.size * kClusterThreads);
  const bool dh = has_dh(c), dw = with_dw(c);
  l.kernel = l.size == kWideRowCluster ? cluster_kernel<T, kWideRowCluster, kClusterCols[2]>(dh, dw)
             : cols <= kClusterCols[0]  ? cluster_kernel<T, kDwCluster, kClusterCols[0]>(dh, dw)
             : cols <= kClusterCols[1]  ? cluster_kernel<T, kDwCluster, kClusterCols[1]>(dh, dw)
                                        : cluster_kernel<T, kDwCluster, kClusterCols[2]>(dh, dw);
  // resident_grid caps the grid at the clusters resident at once: all the rows, or too many.
  const ResidentGrid grid = resident_grid(l.kernel, kClusterThreads, 0, rows * l.size, true, l.size);
  if (grid.cluster != l.size || grid.blocks != rows * l.size) return {};
  return l;
}

// The looped and split plans' row groups: enough tiles x groups for four blocks per SM.
struct TileGrid {
  unsigned tiles;
  std::int64_t groups, rows_per_group;
};

// `tile_cols`: kTileThreads x kTileCols for rmsnorm_bwd_tile_kernel, kTileThreads vectors for
// the aligned kernel. Narrower tiles make fewer groups, so the workspace, sized with the widest
// tile, holds the partials of either.
TileGrid tile_grid(std::int64_t rows, std::int64_t width, std::int64_t tile_cols = kTileThreads * kTileCols) {
  const std::int64_t tiles = (width + tile_cols - 1) / tile_cols;
  const std::int64_t want = std::max<std::int64_t>(1, 4 * current_device_limits().sms / tiles);
  const std::int64_t per_group = (rows + std::min(rows, want) - 1) / std::min(rows, want);
  return {static_cast<unsigned>(tiles), (rows + per_group - 1) / per_group, per_group};
}

// Where the resident kernel keeps dw while the rows go by, and who sums its partial rows (see
// rmsnorm_bwd_resident_kernel). `auto` takes default_dw_way; the `dw_*` variants time each way
// beside it.
struct DwWay {
  bool registers = true;
  bool grid_sum = true;
};

// With dh, dw in registers and the sum in the kernel; without dh, and in the 8-vector kernels
// (which keep dw in shared memory), shared memory and the finalize kernel. Measured (cupti,
// results/sweep/sweep-20261203T153045Z-2944e3.json, 16-bit 4096x4096 and 16384x1024): with dh registers and the grid sum were the fastest way in all four cases (float16
// 4096x4096 39.17 us against 40.73 with the finalize kernel and 41.09 for session 14's shared
// memory and finalize); without dh session 14's way was the fastest or level in all four (float16
// 16384x1024 29.92 us against 30.98), as in session 14's own run against the same kernel
// (results/sweep/sweep-20261203T114953Z-186835.json, another H200). The sum in the kernel with dw in
// shared memory was slower than the finalize kernel in six of the eight, by 0.7-3.7 us (ahead by
// 0.2-0.3 us in the other two), and is no variant. Why the grid sum helps only beside
// registers, and only with dh, is not known.
template <int K>
DwWay default_dw_way(const Case& c) {
  const bool registers = K <= 4 && has_dh(c);
  return {registers, registers};
}

// The resident kernel for T, K and the case's flags, with its blocks and shared memory.
struct ResidentLaunch {
  void (*kernel)(Tensors, std::int64_t, int, int, float, float*, void*, unsigned*);
  ResidentGrid grid;
  std::size_t shared;
};

template <class T, int K, bool Aligned>
auto resident_kernel(bool dh, bool dw, DwWay way) {
  if (!dw)
    return dh ? rmsnorm_bwd_resident_kernel<T, K, true, false, Aligned, false, false>
              : rmsnorm_bwd_resident_kernel<T, K, false, false, Aligned, false, false>;
  const auto with = [dh]<bool Regs, bool Sum>() {
    return dh ? rmsnorm_bwd_resident_kernel<T, K, true, true, Aligned, Regs, Sum>
              : rmsnorm_bwd_resident_kernel<T, K, false, true, Aligned, Regs, Sum>;
  };
  // The 8-vector kernels keep dw in shared memory whatever the way: with it in registers too,
  // float32's spilled at its 128-register bound.
  if constexpr (K <= 4)
    if (way.registers) return way.grid_sum ? with.template operator()<true, true>() : with.template operator()<true, false>();
  return way.grid_sum ? with.template operator()<false, true>() : with.template operator()<false, false>();
}

// `aligned`: every row of h, dy, dh and dx, and w, is whole 16-byte vectors on 16-byte
// boundaries.
template <class T, int K>
ResidentLaunch resident_launch(const RowPlan& plan, const Case& c, bool aligned, DwWay way) {
  if constexpr (K == 8 && sizeof(T) == 2) {  // never planned (kRules), and not compiled: it spills
    throw std::logic_error(c.op + ": no 16-bit 8-vector resident kernel");
  } else {
    const bool dh = has_dh(c), dw = with_dw(c);
    const auto kernel = aligned ? resident_kernel<T, K, true>(dh, dw, way) : resident_kernel<T, K, false>(dh, dw, way);
    const int rows_per_block = plan.threads / plan.lanes;
    // dw's columns: a row per slot. For widths past a warp plan's, the slots are a single row.
    // Then the 8-vector kernels' dh stage with aligned rows: a row of 16-byte vectors per slot.
    const std::size_t vectors = static_cast<std::size_t>((cols_of(c) + kVec<T> - 1) / kVec<T>);
    const std::size_t shared = (dw ? static_cast<std::size_t>(rows_per_block * cols_of(c)) * sizeof(float) : 0) +
                               (staged_dh(dh, K, aligned) ? rows_per_block * vectors * 16 : 0);
    const std::int64_t groups = (rows_of(c) + rows_per_block - 1) / rows_per_block;
    return {kernel, resident_grid(kernel, plan.threads, shared, groups, dw), shared};
  }
}

// The workspace: the dw partials (resident: the grid barrier's counters, then a row per block;
// looped and split: a row per row group) and the looped and split plans' row sums.
std::size_t workspace_bytes(const RowPlan& plan, const Case& c, const RowRules&) {
  const std::size_t width = static_cast<std::size_t>(cols_of(c));
  if (plan.kind == RowKind::resident) {
    if (!with_dw(c)) return 0;
    std::size_t blocks = 0;
    dispatch_dtype(c.dtype, [&]<class T>() {
      // Any of the kernels may run (aligned or not, each way of keeping dw: their registers, and
      // so their grids, differ): room for the largest grid.
      dispatch_resident(c.op, kRules, plan, [&]<int K>() {
        for (const bool aligned : {true, false})
          for (const DwWay way : {DwWay{true, true}, DwWay{true, false}, DwWay{false, true}, DwWay{false, false}})
            blocks = std::max(blocks, static_cast<std::size_t>(resident_launch<T, K>(plan, c, aligned, way).grid.blocks));
      });
    });
    return kGridBarrierBytes + blocks * width * sizeof(float);
  }
  const TileGrid grid = tile_grid(rows_of(c), cols_of(c));
  const std::size_t sums = static_cast<std::size_t>(rows_of(c)) * plan.segments * sizeof(float2);
  std::size_t bytes = sums + (with_dw(c) ? static_cast<std::size_t>(grid.groups) * width * sizeof(float) : 0);
  if (plan.kind == RowKind::split && with_dw(c))  // or the cluster kernel's partials, one a row
    dispatch_dtype(c.dtype, [&]<class T>() {
      if (cluster_launch<T>(c).kernel != nullptr)
        bytes = std::max(bytes, static_cast<std::size_t>(rows_of(c)) * width * sizeof(float));
    });
  return bytes;
}

// Launched to overlap the kernel that writes the partials (it waits for them inside), so that
// its launch and first blocks are not a gap after that kernel ends.
template <class T>
void launch_finalize(const LaunchArgs& a, const float* partial, std::int64_t count) {
  const int width = static_cast<int>(cols_of(a.c));
  const LaunchShape shape{.grid = dim3(static_cast<unsigned>((width + 31) / 32)),
                          .block = dim3(static_cast<unsigned>(finalize_warps(count) * 32)),
                          .stream = a.stream,
                          .overlap_previous = true};
  KB_CUDA(launch_ex(rmsnorm_bwd_finalize_kernel<T>, shape, partial, static_cast<int>(count), width, a.outputs[1].as<T>()));
}

// Every row of h, dy, dh and dx, and w, is whole 16-byte vectors on 16-byte boundaries.
template <class T>
bool all_rows_aligned(const Tensors& t, std::int64_t w) {
  return rows_aligned(static_cast<const T*>(t.h), t.h_stride, w) && rows_aligned(static_cast<const T*>(t.dy), t.dy_stride, w) &&
         (!t.dh || rows_aligned(static_cast<const T*>(t.dh), t.dh_stride, w)) &&
         rows_aligned(static_cast<const T*>(t.dx), w, w) && rows_aligned(static_cast<const T*>(t.w), w, w);
}

// The plan's kernels for launch_row_plan (row_launch.hpp).
struct RmsnormBackwardKernels : PlanLaunch {
  float eps;
  bool clusters = true;  // false: the split plan runs its two-pass kernels wherever it runs
  std::optional<DwWay> dw_way;  // the resident plan's: default_dw_way unless a variant names one

  template <class T, int K>
  void resident() const {
    const Tensors t = tensors(a);
    const bool aligned = all_rows_aligned<T>(t, g.width);
    const DwWay way = dw_way ? *dw_way : default_dw_way<K>(a.c);
    const ResidentLaunch l = resident_launch<T, K>(plan, a.c, aligned, way);
    const bool dw = with_dw(a.c);
    if (dw && a.workspace == nullptr) throw std::invalid_argument(a.c.op + " resident: no workspace");
    auto* barrier = static_cast<unsigned*>(a.workspace);
    float* partial = dw ? reinterpret_cast<float*>(static_cast<unsigned char*>(a.workspace) + kGridBarrierBytes) : nullptr;
    const int width = static_cast<int>(g.width);
    // Never overlapping where the grid meets at a barrier: its size is what fits idle SMs, and
    // blocks placed early beside the previous kernel's (whose shared memory split an SM cannot
    // change while any block is resident) may leave too little room for the rest, which the
    // barrier would then wait for forever (session 34's sweep hung with it overlapping, by this
    // reading, not reproduced since; with it serial every step case ran in session 35's,
    // results/sweep/sweep-20261207T233201Z-47f7a1.json).
    LaunchShape shape = first({.grid = dim3(l.grid.blocks), .block = dim3(static_cast<unsigned>(plan.threads)),
                               .shared = l.shared, .cluster = l.grid.cluster});
    if (way.grid_sum) shape.overlap_previous = false;
    KB_CUDA(launch_ex(l.kernel, shape, t, g.rows, width, plan.lanes, eps, partial,
                      dw ? static_cast<void*>(a.outputs[1].as<T>()) : nullptr, barrier));
    if (dw && !way.grid_sum) launch_finalize<T>(a, partial, l.grid.blocks / l.grid.cluster);  // a partial row per cluster
  }
  template <class T>
  void looped() const {
    two_pass<T>();
  }
  template <class T>
  void split() const {
    const ClusterLaunch<T> l = clusters ? cluster_launch<T>(a.c) : ClusterLaunch<T>{};
    if (l.kernel == nullptr) return two_pass<T>();
    const bool dw = with_dw(a.c), partials = dw && g.rows > 1;
    auto* partial = static_cast<float*>(a.workspace);
    if (partials && partial == nullptr) throw std::invalid_argument(a.c.op + " split: no workspace");
    const LaunchShape shape =
        first({.grid = dim3(static_cast<unsigned>(g.rows) * l.size), .block = dim3(kClusterThreads), .cluster = l.size});
    KB_CUDA(launch_ex(l.kernel, shape, tensors(a), g.rows, static_cast<int>(g.width), eps, partial,
                      dw ? a.outputs[1].as<T>() : nullptr));
    if (partials) launch_finalize<T>(a, partial, g.rows);
  }

  template <class T>
  void two_pass() const {
    if (a.workspace == nullptr) throw std::invalid_argument(a.c.op + ": no workspace");
    const int segments = plan.kind == RowKind::split ? plan.segments : 1;
    const int segment = plan.kind == RowKind::split ? static_cast<int>(plan.segment) : static_cast<int>(g.width);
    auto* sums = static_cast<float2*>(a.workspace);
    float* partial = reinterpret_cast<float*>(sums + g.rows * segments);
    const int w = static_cast<int>(g.width);
    const Tensors t = tensors(a);
    const bool aligned = all_rows_aligned<T>(t, g.width);
    const LaunchShape sums_shape =
        first({.grid = dim3(static_cast<unsigned>(g.rows * segments)), .block = dim3(kTileThreads)});
    KB_CUDA(launch_ex(aligned ? rmsnorm_bwd_sums_kernel<T, true> : rmsnorm_bwd_sums_kernel<T, false>, sums_shape, t, sums,
                      w, segments, segment));
    const TileGrid grid = aligned ? tile_grid(g.rows, g.width, kTileThreads * kVec<T>) : tile_grid(g.rows, g.width);
    const dim3 blocks(grid.tiles, static_cast<unsigned>(grid.groups));
    const bool dh = has_dh(a.c), dw = with_dw(a.c);
    auto kernel = dh ? (dw ? rmsnorm_bwd_tile_kernel<T, true, true> : rmsnorm_bwd_tile_kernel<T, true, false>)
                     : (dw ? rmsnorm_bwd_tile_kernel<T, false, true> : rmsnorm_bwd_tile_kernel<T, false, false>);
    if (aligned)
      kernel = dh ? (dw ? rmsnorm_bwd_tile_vec_kernel<T, true, true> : rmsnorm_bwd_tile_vec_kernel<T, true, false>)
                  : (dw ? rmsnorm_bwd_tile_vec_kernel<T, false, true> : rmsnorm_bwd_tile_vec_kernel<T, false, false>);
    // Launched overlapping the sums kernel, as rmsnorm's split y kernel (rmsnorm.cu says what that gains).
    KB_CUDA(launch_ex(kernel, second({.grid = blocks, .block = dim3(kTileThreads)}), t, static_cast<const float2*>(sums),
                      partial, g.rows, w, segments, grid.rows_per_group, eps));
    if (dw) {
      KB_CUDA_LAUNCH();
      launch_finalize<T>(a, partial, grid.groups);
    }
  }
};

void launch_rmsnorm_backward(const RowPlan& plan, const LaunchArgs& a) {
  const RowGeometry g = checked_geometry(a);
  if (g.rows == 0 || g.width == 0) return;
  launch_row_plan(kRules, plan, a, RmsnormBackwardKernels{{plan, a, g}, static_cast<float>(a.c.param("eps"))});
}

// The split plan's two-pass kernels at any shape (the split variant runs the cluster kernel
// where it can): so that they stay checked, and timed beside it, where both run.
void launch_two_pass_split(const LaunchArgs& a) {
  const RowGeometry g = checked_geometry(a);
  if (g.rows == 0 || g.width == 0) return;
  const RowPlan plan = plan_for(a.c, kRules, Forced::split);
  launch_row_plan(kRules, plan, a, RmsnormBackwardKernels{{plan, a, g}, static_cast<float>(a.c.param("eps")), false});
}

// auto's plan with dw kept and summed another way (kept beside auto while measured).
template <bool Registers, bool GridSum>
void launch_dw_way(const LaunchArgs& a) {
  const RowGeometry g = checked_geometry(a);
  if (g.rows == 0 || g.width == 0) return;
  const RowPlan plan = plan_for(a.c, kRules, std::nullopt);
  RmsnormBackwardKernels k{{plan, a, g}, static_cast<float>(a.c.param("eps"))};
  k.dw_way = DwWay{Registers, GridSum};
  launch_row_plan(kRules, plan, a, k);
}

// The eager baseline's dw: chunks of rows, as many as give about four blocks per SM.
std::int64_t eager_dw_chunks(const Case& c) {
  const std::int64_t tiles = (cols_of(c) + 255) / 256;
  return std::clamp<std::int64_t>(4 * current_device_limits().sms / tiles, 1, std::max<std::int64_t>(rows_of(c), 1));
}

// The eager baseline's workspace: rstd and mean(g n) per row, g and n as float32 tensors, and
// dw's chunk partials.
std::size_t eager_workspace_bytes(const Case& c) {
  const std::size_t rows = static_cast<std::size_t>(rows_of(c)), width = static_cast<std::size_t>(cols_of(c));
  return (2 * rows + 2 * rows * width + static_cast<std::size_t>(eager_dw_chunks(c)) * width) * sizeof(float);
}

void launch_eager(const LaunchArgs& a) {
  const RowGeometry geo = checked_geometry(a);
  if (geo.rows == 0 || geo.width == 0) return;
  float* rstd = float_workspace(a);
  float* m = rstd + geo.rows;
  float* g = m + geo.rows;
  float* n = g + geo.rows * geo.width;
  const int w = static_cast<int>(geo.width);
  const float eps = static_cast<float>(a.c.param("eps"));
  const auto rows = static_cast<unsigned>(geo.rows);
  const unsigned blocks = grid_stride_blocks(geo.rows * geo.width, 256);
  const Tensors t = tensors(a);
  dispatch_dtype(a.c.dtype, [&]<class T>() {
    rmsnorm_bwd_eager_reduce_kernel<T, EagerReduce::rstd><<<rows, 256, 0, a.stream>>>(t, nullptr, nullptr, rstd, w, eps);
    KB_CUDA_LAUNCH();
    rmsnorm_bwd_eager_map_kernel<T, EagerMap::n><<<blocks, 256, 0, a.stream>>>(t, rstd, m, g, n, geo.rows, w);
    KB_CUDA_LAUNCH();
    rmsnorm_bwd_eager_map_kernel<T, EagerMap::g><<<blocks, 256, 0, a.stream>>>(t, rstd, m, g, n, geo.rows, w);
    KB_CUDA_LAUNCH();
    rmsnorm_bwd_eager_reduce_kernel<T, EagerReduce::mean_gn><<<rows, 256, 0, a.stream>>>(t, g, n, m, w, eps);
    KB_CUDA_LAUNCH();
    rmsnorm_bwd_eager_map_kernel<T, EagerMap::dx><<<blocks, 256, 0, a.stream>>>(t, rstd, m, g, n, geo.rows, w);
    if (with_dw(a.c)) {
      KB_CUDA_LAUNCH();
      const std::int64_t chunks = eager_dw_chunks(a.c), chunk = (geo.rows + chunks - 1) / chunks;
      float* partial = n + geo.rows * geo.width;
      rmsnorm_bwd_eager_dw_kernel<T><<<dim3(static_cast<unsigned>((w + 255) / 256), static_cast<unsigned>(chunks)), 256, 0,
                                       a.stream>>>(t, n, partial, geo.rows, w, chunk);
      KB_CUDA_LAUNCH();
      launch_finalize<T>(a, partial, chunks);
    }
  });
  KB_CUDA_LAUNCH();
}

}  // namespace

void register_rmsnorm_backward(Registry& r) {
  RowOpDefinition def{make_rmsnorm_backward_op(),
                      kRules,
                      launch_rmsnorm_backward,
                      {{"auto", std::nullopt, "follows row_plan"},
                       {"block", Forced::resident_block, "persistent blocks of 64-256 threads per row, dw per block"},
                       {"single_block", Forced::resident_any, "persistent blocks, h and dy in registers, dw per block"},
                       {"looped", Forced::looped, "row sums, then column tiles over row groups"},
                       {"looped_serial", Forced::looped,
                        "looped with the tile kernel launched after the sums kernel ends (the control)", true},
                       {"split", Forced::split, "sm_90, rows to 131072 that fit one wave: a cluster per row; else as split_two_pass"}},
                      workspace_bytes};
  register_row_op(r, def);
  Variant two_pass = row_baseline(
      def.op.name, "split_two_pass", "the split plan's two-pass kernels: row sums by pieces, column tiles, finalize",
      [](const Case& c) { return workspace_bytes(plan_for(c, kRules, Forced::split), c, kRules); }, launch_two_pass_split);
  two_pass.baseline = false;  // one of kbench's own plans, not a reference
  r.add_variant(std::move(two_pass));
  const auto auto_workspace = [](const Case& c) { return workspace_bytes(plan_for(c, kRules, std::nullopt), c, kRules); };
  for (Variant v : {row_baseline(def.op.name, "dw_shared_finalize",
                                 "auto's plan, dw in shared memory per row, summed by a finalize kernel (auto's without dh)",
                                 auto_workspace, launch_dw_way<false, false>),
                    row_baseline(def.op.name, "dw_registers_finalize",
                                 "auto's plan, dw in registers, summed by a finalize kernel", auto_workspace,
                                 launch_dw_way<true, false>),
                    row_baseline(def.op.name, "dw_registers_grid_sum",
                                 "auto's plan, dw in registers, summed in the kernel after a grid barrier (auto's with dh)",
                                 auto_workspace, launch_dw_way<true, true>)}) {
    v.baseline = false;
    r.add_variant(std::move(v));
  }
  r.add_variant(row_baseline(def.op.name, "eager", "seven kernels: rstd, n, g, mean(g n), dx, column-sum dw",
                             eager_workspace_bytes, launch_eager));
}

}  // namespace kbench::rows
