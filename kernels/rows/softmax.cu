// softmax over the last dimension: y = exp(x - max) / sum(exp(x - max)), float32 inside.
// Bytes: read rows x width, write rows x width (the minimum; looped and split re-read x, from
// L2 when the plan keeps the rows in flight small enough). Simple to fast:
//   eager (baseline): three kernels the way a framework without fusion runs it: row max,
//          row sum of exp(x - max), then an elementwise normalize. Reads x three times.
//   looped: a block per row, grid-stride; pass 1 keeps an online (max, sum) per lane over
//          chunks of threads x 4 vectors, merged across the block; pass 2 re-reads the row and
//          writes. The grid is capped so the rows in flight fit in half of L2.
//   split: few wide rows. Kernel 1 writes (max, sum) per row piece; kernel 2 merges the row's
//          pieces in a fixed order (every block of a row gets the same bits) and writes its piece.
//          Kernel 2 is launched overlapping kernel 1 (programmatic dependent launch) and waits
//          inside for its statistics; split_serial launches it after, the control.
//   resident (`single_block`): the row stays in registers: every 16-byte load is issued before
//          the max, so x is read once and each SM has 64 bytes per thread in flight.
// Masking: -inf anywhere works in every plan (safe_shift: a lane that has seen only -inf
// shifts by 0); a fully masked row gives 0 * (1/0) = NaN, as PyTorch does; NaN propagates
// through the sum; +inf gives NaN (inf - inf), as PyTorch does.
#include <cuda_runtime.h>

#include "core/errors.hpp"
#include "kernels/common/launch_ex.cuh"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_device.cuh"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_launch.hpp"
#include "kernels/rows/softmax_device.cuh"

namespace kbench::rows {

Op make_softmax_op();  // softmax_op.cpp

namespace {

// softmax reads its row twice outside registers (looped and split re-read it from L2).
// float32 block plans hold 8 vectors per thread (up to 256 threads, 2048 vectors): the exps
// replace the raw vectors in the same 32 registers, so the kernel stays at 64 registers and a
// row takes half the threads. Registers, not threads, cap how many blocks an SM holds, so
// twice the bytes are in flight per SM: 8192x8192 went from 83.2% to 91.9% of copy bandwidth
// (docs/kernels.md). 16-bit exps take twice their raw registers (~100 at 8 vectors), so they
// keep 4. Each split piece keeps (max, sum) as two floats.
// The plan thresholds come from two bfloat16 grids of one H200 call (results/grid/; figures
// from the second, 6b1c87) and the rows sweep, through `kbench fit` (results/fit/):
// - rows of more than 2048 vectors loop (1056x32768: 49.9 us looped, 59.0 resident), in
//   8192-element chunks up to 4 blocks per SM and 2048 past it;
// - rows below half the SM count split past 16384 elements (8x12288: 3.37 us resident, 4.94
//   split), and rows below the SM count past 65536 (66x100000 and 99x100000: split 9.8 and 17.2
//   us, looped 14.9 and 22.5), not at 32769, where looping won in the grid (99x32769: 8.66 us
//   against 9.28) and in the rows sweep (128x32769 float32: 14.1 against 16.5,
//   archive/sweep/sweep-20261201T125730Z-df7227.json.gz);
// - rows of more than 128 vectors take a block (1x2048: 2.13 us in a 64-thread block, 2.81 in
//   a warp of 8 vectors), not past 64 as the grid alone preferred: the rows sweep's 16384x1024
//   float16 (128 vectors) took 21.4 us in a block against 18.5 in a warp (d6f002), while its
//   float32 (256 vectors) kept copy speed in one (34.4 us);
// Holding those three, the fit (results/fit/fit-20261201T131613Z-403f0a.json) finds nothing
// better beyond the runs' own difference: held-out mean regret 1.2%, 10 of 345 cells more than
// 10% off (the thresholds before: 9.0%, 67; the fit unheld, archive/fit/: 0.6%, 7).
// float32 and float16 follow the same thresholds in vectors (bytes), unfitted.
// Two fresh runs (results/grid/grid-20261202T040740Z-f5aa97.json, -040824Z-14aa6b; fit
// results/fit/fit-20261202T042418Z-5cf185.json) had the rule at 1.5% and 13 cells off, most of
// them 24576-32769 wide rows at 66-132 rows that a 1024-thread resident row runs 12-20% faster
// than looping (66x32768: 6.65 us against 8.35). The fit moves two thresholds: up to one row per
// SM, rows that do not split stay resident to 4096 vectors (wide_resident_rows_per_sm), and rows
// of more than 32 vectors take a block below 8 rows per SM (1x513: 1.82 us in a block, 2.10 in
// a warp). Held: warp_max_vecs (the 16384x1024 float16 reason above; the outside grid keeps the
// warp from 2112 rows, 16384x1024 bfloat16 17.80 against 21.64 us,
// archive/grid/grid-20261202T015754Z-29e82e.json.gz), and the split of rows below the SM count,
// which the unheld fit moved to 32768 for 66x65536 (split 9.64 us, looped 14.78) but which
// would then split 128x32769, where the outside grid loops 22-37% faster (float32 9.54 us
// against 13.11, bfloat16 8.64 against 10.53). Held-out mean regret 0.3%, 2 of 345 cells more
// than 10% off (those two 65536-wide ones).
constexpr RowRules kRules{.max_threads_8 = 256,
                          .auto_resident_vecs = 2048,
                          .wide_resident_rows_per_sm = 1,
                          .warp_max_vecs = 128,
                          .warp_min_rows_per_sm = 8,
                          .block_eight_vectors_f32 = true,
                          .split_above_width = 16384,
                          .split_all_sms_above_width = 65536,
                          .chunk_4096_per_sm = 4,
                          .split_piece_bytes = 2 * sizeof(float)};

constexpr int kLoopVecs = 4;

// y at the row's scalar head and tail (fewer than a vector each): element i of each, for the
// threads with i below their length.
template <class T>
__device__ __forceinline__ void normalized_edges(const T* xr, T* yr, const RowParts& p, int i, float shift,
                                                 float inv) {
  if (i < p.head) yr[i] = from_float<T>(exp_diff(to_float(xr[i]) - shift) * inv);
  if (i < p.tail) yr[p.tail_begin + i] = from_float<T>(exp_diff(to_float(xr[p.tail_begin + i]) - shift) * inv);
}

// The row stays in registers (softmax_resident_row in softmax_device.cuh, shared with kbench
// spec's builds).
template <class T, int K>
__global__ void __launch_bounds__(kRules.max_threads(K))
    softmax_resident_kernel(const T* __restrict__ x, std::int64_t x_stride, T* __restrict__ y,
                            std::int64_t rows, int width, int lanes) {
  trigger_next_grid();  // a step's backward may start launching now: it waits inside for this grid's end
  softmax_resident_row<T, K, false>(x, x_stride, y, rows, width, lanes);
}

// Pass 1 over n elements at xr: this thread's (max, compensated sum) over its vectors and
// edge elements.
template <class T>
__device__ __forceinline__ Stats thread_stats(const T* xr, const RowParts& p) {
  const int step = blockDim.x * kLoopVecs, end = p.nvec;
  const int t = threadIdx.x;
  float m = fmaxf(t < p.head ? to_float(xr[t]) : -INFINITY,
                  t < p.tail ? to_float(xr[p.tail_begin + t]) : -INFINITY);
  KahanSum acc;
  {
    const float sh = safe_shift(m);
    acc.add((t < p.head ? exp_diff(to_float(xr[t]) - sh) : 0.0f) +
            (t < p.tail ? exp_diff(to_float(xr[p.tail_begin + t]) - sh) : 0.0f));
  }
  for (int base = 0; base < end; base += step) {
    uint4 raw[kLoopVecs];
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k) {
      const int v = base + t + k * blockDim.x;
      if (v < end) raw[k] = load16<T, Cache::normal>(xr + p.head + v * kVec<T>, true);
    }
    float mc = -INFINITY;
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k)
      if (base + t + k * blockDim.x < end)
#pragma unroll
        for (int j = 0; j < kVec<T>; ++j) mc = fmaxf(mc, elem<T>(raw[k], j));
    const float m_new = fmaxf(m, mc);
    const float sh = safe_shift(m_new);
    acc.scale(exp_diff(m - sh));  // m = -inf: scale by 0 (the sum was 0)
    float part = 0.0f;
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k)
      if (base + t + k * blockDim.x < end)
#pragma unroll
        for (int j = 0; j < kVec<T>; ++j) part += exp_diff(elem<T>(raw[k], j) - sh);
    acc.add(part);
    m = m_new;
  }
  return {m, acc.value()};
}

// Pass 2: writes n elements of the output at yr from x at xr.
template <class T>
__device__ __forceinline__ void write_normalized(const T* xr, T* yr, const RowParts& p, float shift,
                                                 float inv) {
  const int step = blockDim.x * kLoopVecs, end = p.nvec;
  const int t = threadIdx.x;
  const bool y_vec = same_phase(xr, yr);
  for (int base = 0; base < end; base += step) {
    uint4 raw[kLoopVecs];
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k) {
      const int v = base + t + k * blockDim.x;
      if (v < end) raw[k] = load16<T, Cache::last_use>(xr + p.head + v * kVec<T>, true);
    }
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k) {
      const int v = base + t + k * blockDim.x;
      if (v < end) store16<T>(yr + p.head + v * kVec<T>, normalize16<T>(raw[k], shift, inv), y_vec);
    }
  }
  normalized_edges(xr, yr, p, t, shift, inv);
}

template <class T>
__global__ void __launch_bounds__(1024) softmax_looped_kernel(const T* __restrict__ x,
                                                              std::int64_t x_stride,
                                                              T* __restrict__ y,
                                                              std::int64_t rows, int width) {
  __shared__ float scratch[64];
  trigger_next_grid();  // a step's backward may start launching now: it waits inside for this grid's end
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row_offset(row, x_stride);
    T* yr = y + row_offset(row, width);
    const RowParts p = row_parts(xr, width);
    const Stats st = block_merge(thread_stats(xr, p), scratch);  // ends with a barrier
    write_normalized(xr, yr, p, safe_shift(st.m), 1.0f / st.s);
  }
}

template <class T>
__global__ void __launch_bounds__(256) softmax_split_stats_kernel(
    const T* __restrict__ x, std::int64_t x_stride, float2* __restrict__ stats, int width,
    int segments, int segment) {
  __shared__ float scratch[64];
  trigger_next_grid();  // the write kernel's blocks may take the SMs this grid's last wave leaves
  const std::int64_t row = blockIdx.x / segments;
  const int begin = (blockIdx.x % segments) * segment;
  const T* xr = x + row_offset(row, x_stride) + begin;
  const RowParts p = row_parts(xr, min(segment, width - begin));
  const Stats st = block_merge(thread_stats(xr, p), scratch);
  if (threadIdx.x == 0) stats[blockIdx.x] = make_float2(st.m, st.s);
}

template <class T>
__global__ void __launch_bounds__(256) softmax_split_write_kernel(
    const T* __restrict__ x, std::int64_t x_stride, const float2* __restrict__ stats,
    T* __restrict__ y, int width, int segments, int segment) {
  __shared__ float scratch[64];
  wait_for_previous_grid();  // launched overlapping the stats kernel: its stats first
  trigger_next_grid();  // a step's backward may start launching now: it waits inside for this grid's end
  const std::int64_t row = blockIdx.x / segments;
  const int begin = (blockIdx.x % segments) * segment;
  // Merge the row's pieces: thread-strided in a fixed order, then the fixed block tree.
  Stats st{-INFINITY, 0.0f};
  for (int i = threadIdx.x; i < segments; i += blockDim.x) {
    const float2 s = stats[row * segments + i];
    st = merge(st, Stats{s.x, s.y});
  }
  st = block_merge(st, scratch);
  const T* xr = x + row_offset(row, x_stride) + begin;
  const RowParts p = row_parts(xr, min(segment, width - begin));
  write_normalized(xr, y + row_offset(row, width) + begin, p, safe_shift(st.m), 1.0f / st.s);
}

// ---- eager: three kernels ------------------------------------------------------------------

enum class EagerPass { max, expsum };

// A block per row: pass max writes stat[row] = max; pass expsum writes sum(exp(x - max)).
template <class T, EagerPass P>
__global__ void __launch_bounds__(256) softmax_eager_reduce_kernel(const T* __restrict__ x,
                                                                   std::int64_t x_stride,
                                                                   float* __restrict__ row_max,
                                                                   float* __restrict__ row_sum,
                                                                   int width) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const T* xr = x + row_offset(row, x_stride);
  const RowParts p = row_parts(xr, width);
  const int t = threadIdx.x, step = blockDim.x * kLoopVecs;
  const float shift = P == EagerPass::expsum ? safe_shift(row_max[row]) : 0.0f;
  auto f = [&](float v) { return P == EagerPass::max ? v : exp_diff(v - shift); };
  float acc = P == EagerPass::max ? -INFINITY : 0.0f;
  KahanSum sum;
  for (int base = 0; base < p.nvec; base += step) {
    uint4 raw[kLoopVecs];
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k) {
      const int v = base + t + k * blockDim.x;
      if (v < p.nvec) raw[k] = load16<T, Cache::normal>(xr + p.head + v * kVec<T>, true);
    }
    float part = P == EagerPass::max ? -INFINITY : 0.0f;
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k)
      if (base + t + k * blockDim.x < p.nvec)
#pragma unroll
        for (int j = 0; j < kVec<T>; ++j) {
          const float e = f(elem<T>(raw[k], j));
          part = P == EagerPass::max ? fmaxf(part, e) : part + e;
        }
    if constexpr (P == EagerPass::max) acc = fmaxf(acc, part);
    else sum.add(part);
  }
  if (t < p.head) {
    const float e = f(to_float(xr[t]));
    if constexpr (P == EagerPass::max) acc = fmaxf(acc, e); else sum.add(e);
  }
  if (t < p.tail) {
    const float e = f(to_float(xr[p.tail_begin + t]));
    if constexpr (P == EagerPass::max) acc = fmaxf(acc, e); else sum.add(e);
  }
  if constexpr (P == EagerPass::max) {
    acc = block_reduce(acc, scratch, MaxOp{});
    if (t == 0) row_max[row] = acc;
  } else {
    acc = block_reduce(sum.value(), scratch, SumOp{});
    if (t == 0) row_sum[row] = acc;
  }
}

// Elementwise: y = exp(x - max[row]) / sum[row]; grid-stride over (row, piece of 256 x 16 B).
template <class T>
__global__ void __launch_bounds__(256) softmax_eager_normalize_kernel(
    const T* __restrict__ x, std::int64_t x_stride, const float* __restrict__ row_max,
    const float* __restrict__ row_sum, T* __restrict__ y, std::int64_t rows, int width,
    int pieces) {
  const std::int64_t items = rows * pieces;
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const std::int64_t row = item / pieces;
    const int piece = static_cast<int>(item % pieces);
    const T* xr = x + row_offset(row, x_stride);
    T* yr = y + row_offset(row, width);
    const RowParts p = row_parts(xr, width);
    const float shift = safe_shift(row_max[row]), inv = 1.0f / row_sum[row];
    const int v = piece * blockDim.x + threadIdx.x;
    if (v < p.nvec)
      store16<T>(yr + p.head + v * kVec<T>,
                 normalize16<T>(load16<T, Cache::last_use>(xr + p.head + v * kVec<T>, true), shift, inv),
                 same_phase(xr, yr));
    if (piece == 0) normalized_edges(xr, yr, p, static_cast<int>(threadIdx.x), shift, inv);
  }
}

// The plan's kernels for launch_row_plan (row_launch.hpp).
struct SoftmaxKernels : PlanLaunch {
  template <class T, int K>
  void resident() const {
    softmax_resident_kernel<T, K><<<static_cast<unsigned>(plan.blocks), plan.threads, 0, a.stream>>>(
        a.inputs[0].as<const T>(), g.stride, a.outputs[0].as<T>(), g.rows, static_cast<int>(g.width), plan.lanes);
  }
  template <class T>
  void looped() const {
    softmax_looped_kernel<T><<<static_cast<unsigned>(plan.blocks), plan.threads, 0, a.stream>>>(
        a.inputs[0].as<const T>(), g.stride, a.outputs[0].as<T>(), g.rows, static_cast<int>(g.width));
  }
  template <class T>
  void split() const {
    auto* stats = static_cast<float2*>(a.workspace);
    const auto blocks = static_cast<unsigned>(g.rows * plan.segments);
    const int w = static_cast<int>(g.width), seg = static_cast<int>(plan.segment);
    const T* x = a.inputs[0].as<const T>();
    softmax_split_stats_kernel<T><<<blocks, 256, 0, a.stream>>>(x, g.stride, stats, w, plan.segments, seg);
    KB_CUDA_LAUNCH();
    // Launched overlapping the stats kernel, as rmsnorm's split y kernel (rmsnorm.cu says what that gains).
    KB_CUDA(launch_ex(softmax_split_write_kernel<T>, second({.grid = dim3(blocks), .block = dim3(256)}), x, g.stride,
                      static_cast<const float2*>(stats), a.outputs[0].as<T>(), w, plan.segments, seg));
  }
};

void launch_softmax(const RowPlan& plan, const LaunchArgs& a) {
  const RowGeometry g = checked_row_geometry(a, {cols_of(a.c)});
  if (g.rows == 0 || g.width == 0) return;
  launch_row_plan(kRules, plan, a, SoftmaxKernels{{plan, a, g}});
}

void launch_eager(const LaunchArgs& a) {
  const RowGeometry s = checked_row_geometry(a, {cols_of(a.c)});
  if (s.rows == 0 || s.width == 0) return;
  if (a.workspace == nullptr) throw std::invalid_argument(a.c.op + " eager: no workspace");
  const int w = static_cast<int>(s.width);
  auto* row_max = static_cast<float*>(a.workspace);
  float* row_sum = row_max + s.rows;
  dispatch_dtype(a.c.dtype, [&]<class T>() {
    const T* x = a.inputs[0].as<const T>();
    const auto rows = static_cast<unsigned>(s.rows);
    softmax_eager_reduce_kernel<T, EagerPass::max><<<rows, 256, 0, a.stream>>>(x, s.stride, row_max, row_sum, w);
    KB_CUDA_LAUNCH();
    softmax_eager_reduce_kernel<T, EagerPass::expsum><<<rows, 256, 0, a.stream>>>(x, s.stride, row_max, row_sum, w);
    KB_CUDA_LAUNCH();
    const int pieces = static_cast<int>((s.width / kVec<T> + 255) / 256) + 0;
    const std::int64_t items = s.rows * std::max(pieces, 1);
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(items, std::int64_t{1} << 20));
    softmax_eager_normalize_kernel<T><<<blocks, 256, 0, a.stream>>>(x, s.stride, row_max, row_sum,
                                                                     a.outputs[0].as<T>(), s.rows, w,
                                                                     std::max(pieces, 1));
  });
  KB_CUDA_LAUNCH();
}

}  // namespace

void register_softmax(Registry& r) {
  const RowOpDefinition def{
      make_softmax_op(), kRules, launch_softmax,
      {{"auto", std::nullopt, "follows row_plan"},
       {"single_block", Forced::resident_any, "row held in registers, one read of x"},
       {"looped", Forced::looped, "online max and sum per lane over chunks, then a second read"},
       {"split", Forced::split, "per-piece statistics kernel, then a merge-and-write kernel"},
       {"split_serial", Forced::split, "split with the write kernel launched after the stats kernel ends (the control)", true}}};
  register_row_op(r, def);
  r.add_variant(row_baseline(
      def.op.name, "eager", "three kernels: row max, row sum of exp, normalize",
      [](const Case& c) { return static_cast<std::size_t>(2 * rows_of(c)) * sizeof(float); }, launch_eager));
}

}  // namespace kbench::rows
