// row_sum: y[r] = sum of x[r, :], accumulated in float32, written in x's dtype.
// Bytes: read rows x width, write rows elements. Simple to fast:
//   cub (baseline): cub::DeviceSegmentedReduce::Reduce, one segment per row, float32
//          accumulator through a converting input iterator.
//   resident (`warp`, `block`): each thread issues all of its 16-byte loads (1-8 per thread)
//          before adding; narrow rows give a row to 1..32 lanes of a warp (shuffles only,
//          several rows per block), wider rows a block of 128..1024 threads (one shared-memory
//          step). One block per row or row group: no loop, no shared scratch reused. Rows
//          of whole 16-byte vectors (aligned base, stride and width) take a leaner kernel
//          with no per-row head or tail and no branch around its loads.
//   looped: a block per row, grid-stride over rows; the row in chunks of threads x 4 vectors,
//          each lane adding its chunk partial into a compensated (Kahan) sum, so widths to 2^20
//          do not drift.
//   split: fewer rows than SMs. One kernel: a block per row piece writes its float32 partial
//          and counts itself done on the row's counter; the row's last block adds the partials
//          in a fixed order (deterministic: the order does not depend on which block is last)
//          and resets the counter. A second kernel for the final sum cost a launch, ~2 us of
//          GPU time with the events timer, which left it behind CUB at 128x32769.
#include <cuda_runtime.h>

#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include "core/errors.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_device.cuh"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_launch.hpp"

namespace kbench::rows {

Op make_row_sum_op();  // row_sum_op.cpp

namespace {

// row_sum reads each element once and keeps only a sum:
// - Resident up to 512 threads x 4 vectors (auto_resident_vecs), with all its loads in flight
//   at once: at 16-bit 8192x8192 it was 3% faster than looped (33.1 vs 34.0 us, events); at
//   float32 8192x8192 (a 512-thread block) the aligned kernel ran 59.5 us against looped's
//   59.7-60.5 and CUB's 59.8 in two runs (graph; docs/records/2026-11-30-rowsum-lean-explore).
//   Past it, looped (128 threads, 4 vectors a step) needs no wider blocks; wider are unmeasured.
// - No 8-vector warp plan: at 16384x1024 float32 a 64-thread block with 4 vectors each ran
//   16.77-16.84 us against the warp's 17.04-17.07 in four tuning runs, each on its own H200
//   (graph; docs/records/2026-11-30-rowsum-cub-explore). Its 8-vector kernels keep the 128-thread
//   bound: under 256 they got 48 registers instead of 62 and ran 1.2x slower (16384x1024
//   float32, an unsaved run).
// - fill_sm_f32: its float32 kernels fit a full SM (2048 threads at 32 registers; 29 with its
//   4 loads in flight). Unbounded, ptxas gave the 4-vector kernel 44, and ncu showed its
//   512-thread block plan at 8192x8192 at 50% occupancy. The 16-bit kernels spill at 32 (they
//   take 42), so they keep no second bound.
// - One pass: looped takes a block per row (row_plan.cpp says why).
// - Split pieces write a float32 partial, and each row keeps a done-counter.
// The other thresholds are the fit's on two bfloat16 grid runs of one H200
// (archive/grid/grid-20261201T161448Z-64b619.json.gz and -161513Z-e8a15f.json) with one held: the
// unheld fit (results/fit/fit-20261201T162104Z-c61ccb.json) kept rows resident to 4096 vectors,
// but past the grid's 8 rows per SM a 1024-thread row loses to looping (configs/grid_outside.json,
// float32 16384x8193: 189.93 us resident, 119.16 looped), so rows stay resident to 2048 vectors.
// Held, the fit (results/fit/fit-20261201T171046Z-8f67b1.json) keeps the rest: held-out mean
// regret 3.6%, 32 of 345 cells more than 10% off, against 23.1% and 96-97 for the thresholds
// before (a warp to 256 vectors, every row count below the SMs split past 8192, chunks by the
// defaults). From the fit (figures: run 64b619, graph, warm):
// - rows of more than 128 vectors take a block, not a warp;
// - rows below half the SMs split past 32768 elements and those below all of them past 65536
//   (99x32769: looped 3.36 us, split 4.17; the split won at 128x32769 against an older looped
//   kernel, 8.0 against 12.7 us);
// - the looped chunk follows the rows per SM as well (chunk_counts_rows), 8192 up to 8 blocks in
//   flight (1056x65536: looped.c8192 33.1 us, c2048 38.8).
// Two later runs (results/grid/grid-20261202T040448Z-079f8f.json, -040514Z-d7c180; fit
// results/fit/fit-20261202T042048Z-b10095.json) had that rule at 3.1% and 33 cells off, 30 of
// them rows of 24576-32768 elements at 1-132 rows, looped where a 1024-thread resident row ran
// 10-30% faster (1x32768: 1.98 us against 2.86). The fit adds two thresholds: up to one row per
// SM (one wave of its 1024-thread blocks, which take 42 registers a thread in 16 bits), rows that
// do not split stay resident to 4096 vectors (from 198 rows, a second wave, looping wins again:
// 198x32768 3.70 us against 3.85); and lanes hold 4 vectors from 9 vectors on, not 33 (1056x256:
// 1.17 us in 8 lanes of 4, 1.32 in 32 lanes of 1; the outside grid agrees at 16384x256, 2.32
// against 3.52, archive/grid/grid-20261202T015739Z-c8e2fe.json.gz). Held-out mean regret 0.4%, 4 of
// 345 cells more than 10% off.
constexpr RowRules kRules{.fill_sm_f32 = true,
                          .auto_resident_vecs = 512 * 4,
                          .wide_resident_rows_per_sm = 1,
                          .one_vector_max_vecs = 8,
                          .warp_eight_vectors = false,
                          .warp_max_vecs = 128,
                          .two_pass = false,
                          .split_below_divisor = 2,
                          .split_above_width = 32768,
                          .split_all_sms_above_width = 65536,
                          .chunk_8192_per_sm = 8,
                          .chunk_counts_rows = true,
                          .split_row_bytes = sizeof(unsigned)};

template <class T>
__device__ __forceinline__ float vec_sum(const uint4& u) {
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) s += elem<T>(u, j);
  return s;
}

// Aligned rows (the launcher checks the base, the stride and the width are multiples of 16
// bytes): a row is whole vectors, so there is no per-row head or tail and loads past the row
// are predicated off (zero-filled). The row's start is one 16-byte vector pointer, formed
// once: built in elements instead (x + row * stride + v * kVec), ptxas recomputed the 64-bit
// row offset under each load's predicate, 79 instructions before the first load. A block plan
// (WholeBlock: a row per block, the grid is the rows) takes its row from blockIdx.x alone; a
// warp plan's slots past the last row read the last row again and drop their sum, so no
// branch guards the loads. Each step was timed in one process against a stripped-down kernel
// that was 1.3% faster at float32 4096x4096 (2.7% at float16) than the general kernel below
// (docs/records/2026-11-30-rowsum-lean-explore).
template <class T, int K, bool WholeBlock>
__global__ void __launch_bounds__(kRules.max_threads(K), kRules.min_blocks(K, sizeof(T)))
    row_sum_aligned_kernel(const T* __restrict__ x, std::int64_t x_stride, T* __restrict__ y,
                           std::int64_t rows, int nvec, int lanes) {
  __shared__ float scratch[32];
  std::int64_t row;
  int lane;
  if constexpr (WholeBlock) {
    row = blockIdx.x;
    lane = static_cast<int>(threadIdx.x);
  } else {
    const RowSlot slot = resident_slot(lanes);
    row = slot.row;
    lane = slot.lane;
  }
  const std::int64_t read_row = WholeBlock ? row : min(row, rows - 1);
  const auto* xr = reinterpret_cast<const uint4*>(x + row_offset(read_row, x_stride));
  uint4 raw[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = lane + k * lanes;
    raw[k] = v < nvec ? __ldg(xr + v) : make_uint4(0, 0, 0, 0);
  }
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) acc += vec_sum<T>(raw[k]);  // zero bits are +0 in every dtype
  if constexpr (WholeBlock) acc = block_reduce(acc, scratch, SumOp{});
  else acc = group_reduce(acc, lanes, SumOp{});
  if ((WholeBlock || row < rows) && lane == 0) y[row] = from_float<T>(acc);
}

// Any row: a scalar head up to the first 16-byte boundary, whole vectors, a scalar tail.
template <class T, int K>
__global__ void __launch_bounds__(kRules.max_threads(K), kRules.min_blocks(K, sizeof(T)))
    row_sum_resident_kernel(const T* __restrict__ x, std::int64_t x_stride, T* __restrict__ y,
                            std::int64_t rows, int width, int lanes) {
  __shared__ float scratch[32];
  const auto [row, lane] = resident_slot(lanes);
  float acc = 0.0f;
  if (row < rows) {
    const T* xr = x + row_offset(row, x_stride);
    const RowParts p = row_parts(xr, width);
    if (p.nvec > 0) {
      uint4 raw[K];
      load_vectors<T, Cache::normal>(raw, xr + p.head, lane, lanes, p.nvec - 1);
#pragma unroll
      for (int k = 0; k < K; ++k)
        if (lane + k * lanes < p.nvec) acc += vec_sum<T>(raw[k]);
    }
    if (lane < p.head) acc += to_float(xr[lane]);
    if (lane < p.tail) acc += to_float(xr[p.tail_begin + lane]);
  }
  acc = row_reduce(acc, lanes, scratch, SumOp{});
  if (row < rows && lane == 0) y[row] = from_float<T>(acc);
}

constexpr int kLoopVecs = 4;

// This thread's compensated partial of n elements at xr (block-strided 16-byte vectors).
template <class T>
__device__ __forceinline__ float thread_partial(const T* xr, int n) {
  const RowParts p = row_parts(xr, n);
  const int step = blockDim.x * kLoopVecs;
  const int end = p.nvec;
  KahanSum acc;
  for (int base = 0; base < end; base += step) {
    uint4 raw[kLoopVecs];
    load_vectors<T, Cache::normal>(raw, xr + p.head, base + static_cast<int>(threadIdx.x),
                                   static_cast<int>(blockDim.x), end - 1);
    float part = 0.0f;
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k)
      if (base + threadIdx.x + k * blockDim.x < end) part += vec_sum<T>(raw[k]);
    acc.add(part);
  }
  float edge = 0.0f;
  if (static_cast<int>(threadIdx.x) < p.head) edge += to_float(xr[threadIdx.x]);
  if (static_cast<int>(threadIdx.x) < p.tail) edge += to_float(xr[p.tail_begin + threadIdx.x]);
  acc.add(edge);
  return acc.value();
}

template <class T>
__global__ void __launch_bounds__(1024) row_sum_looped_kernel(const T* __restrict__ x,
                                                              std::int64_t x_stride,
                                                              T* __restrict__ y,
                                                              std::int64_t rows, int width) {
  __shared__ float scratch[32];
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float part = thread_partial(x + row_offset(row, x_stride), width);
    const float total = block_reduce(part, scratch, SumOp{});  // ends with a barrier
    if (threadIdx.x == 0) y[row] = from_float<T>(total);
  }
}

// The split workspace: rows x segments partials, then one counter per row (zero between
// launches: the workspace starts zeroed and each row's last block resets its counter).
struct SplitScratch {
  float* partial;
  unsigned* done;
};

inline SplitScratch split_scratch(void* workspace, std::int64_t rows, int segments) {
  auto* partial = static_cast<float*>(workspace);
  return {partial, reinterpret_cast<unsigned*>(partial + rows * segments)};
}

template <class T>
__global__ void __launch_bounds__(256) row_sum_split_kernel(const T* __restrict__ x,
                                                            std::int64_t x_stride,
                                                            T* __restrict__ y, SplitScratch w,
                                                            int width, int segments, int segment) {
  __shared__ float scratch[32];
  __shared__ bool last;
  const std::int64_t row = blockIdx.x / segments;
  const int seg = blockIdx.x % segments;
  const int begin = seg * segment;
  const int n = min(segment, width - begin);
  const float part = thread_partial(x + row_offset(row, x_stride) + begin, n);
  const float total = block_reduce(part, scratch, SumOp{});
  if (threadIdx.x == 0) {
    w.partial[blockIdx.x] = total;
    __threadfence();  // the partial is visible GPU-wide before the count says so
    last = atomicAdd(&w.done[row], 1u) == static_cast<unsigned>(segments - 1);
  }
  __syncthreads();
  if (!last || threadIdx.x >= 32) return;
  // The row's last block: every other piece's partial is visible (each fenced before counting).
  __threadfence();
  const float* partial = w.partial + row * segments;
  KahanSum acc;
  for (int i = threadIdx.x; i < segments; i += 32) acc.add(__ldcg(partial + i));
  const float sum = group_reduce(acc.value(), 32, SumOp{});
  if (threadIdx.x == 0) {
    y[row] = from_float<T>(sum);
    w.done[row] = 0;  // ready for the next launch
  }
}

template <class T>
struct ToFloat {
  __host__ __device__ float operator()(T v) const { return static_cast<float>(v); }
};
template <class T>
struct FromFloat {
  __host__ __device__ T operator()(float v) const { return T(v); }
};
struct RowBegin {
  std::int64_t stride;
  __host__ __device__ std::int64_t operator()(std::int64_t r) const { return r * stride; }
};
struct RowEnd {
  std::int64_t stride, width;
  __host__ __device__ std::int64_t operator()(std::int64_t r) const { return r * stride + width; }
};

// One CUB call for both the size query (temp == nullptr) and the reduction.
template <class T>
cudaError_t cub_segmented_sum(void* temp, std::size_t& temp_bytes, const T* x, T* y,
                              std::int64_t rows, std::int64_t width, std::int64_t stride,
                              cudaStream_t stream) {
  auto in = thrust::make_transform_iterator(x, ToFloat<T>{});
  auto out = thrust::make_transform_output_iterator(y, FromFloat<T>{});
  auto begin = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                               RowBegin{stride});
  auto end = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                             RowEnd{stride, width});
  return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, in, out, rows, begin, end,
                                            ::cuda::std::plus<float>{}, 0.0f, stream);
}

// The plan's kernels for launch_row_plan (row_launch.hpp).
struct RowSumKernels : PlanLaunch {

  template <class T, int K>
  void resident() const {
    const T* x = a.inputs[0].as<const T>();
    T* y = a.outputs[0].as<T>();
    const auto blocks = static_cast<unsigned>(plan.blocks);
    const int w = static_cast<int>(g.width);
    if (!rows_aligned(x, g.stride, g.width))
      row_sum_resident_kernel<T, K><<<blocks, plan.threads, 0, a.stream>>>(x, g.stride, y, g.rows, w, plan.lanes);
    else if (plan.lanes > 32)  // a block per row
      row_sum_aligned_kernel<T, K, true><<<blocks, plan.threads, 0, a.stream>>>(x, g.stride, y, g.rows, w / kVec<T>, plan.lanes);
    else
      row_sum_aligned_kernel<T, K, false><<<blocks, plan.threads, 0, a.stream>>>(x, g.stride, y, g.rows, w / kVec<T>, plan.lanes);
  }
  template <class T>
  void looped() const {
    row_sum_looped_kernel<T><<<static_cast<unsigned>(plan.blocks), plan.threads, 0, a.stream>>>(
        a.inputs[0].as<const T>(), g.stride, a.outputs[0].as<T>(), g.rows, static_cast<int>(g.width));
  }
  template <class T>
  void split() const {
    row_sum_split_kernel<T><<<static_cast<unsigned>(g.rows * plan.segments), 256, 0, a.stream>>>(
        a.inputs[0].as<const T>(), g.stride, a.outputs[0].as<T>(), split_scratch(a.workspace, g.rows, plan.segments),
        static_cast<int>(g.width), plan.segments, static_cast<int>(plan.segment));
  }
};

void launch_row_sum(const RowPlan& plan, const LaunchArgs& a) {
  const RowGeometry g = checked_row_geometry(a, {1});
  if (g.rows == 0) return;
  if (g.width == 0) {  // empty rows sum to +0 (all-zero bits in every dtype)
    KB_CUDA(cudaMemsetAsync(a.outputs[0].data, 0, g.rows * dtype_size(a.c.dtype), a.stream));
    return;
  }
  launch_row_plan(kRules, plan, a, RowSumKernels{{plan, a, g}});
}

std::size_t cub_workspace_bytes(const Case& c) {
  std::size_t bytes = 0;
  const std::int64_t rows = rows_of(c), width = cols_of(c);
  const std::int64_t stride = c.row_stride ? c.row_stride : width;
  if (rows == 0) return 0;
  dispatch_dtype(c.dtype, [&]<class T>() {
    KB_CUDA(cub_segmented_sum<T>(nullptr, bytes, nullptr, nullptr, rows, width, stride, nullptr));
  });
  return bytes;
}

void launch_cub(const LaunchArgs& a) {
  const RowGeometry g = checked_row_geometry(a, {1});
  if (g.rows == 0) return;
  dispatch_dtype(a.c.dtype, [&]<class T>() {
    std::size_t bytes = cub_workspace_bytes(a.c);
    KB_CUDA(cub_segmented_sum<T>(a.workspace, bytes, a.inputs[0].as<const T>(), a.outputs[0].as<T>(), g.rows,
                                 g.width, g.stride, a.stream));
  });
  KB_CUDA_LAUNCH();
}

}  // namespace

void register_row_sum(Registry& r) {
  const RowOpDefinition def{
      make_row_sum_op(), kRules, launch_row_sum,
      {{"auto", std::nullopt, "follows row_plan"},
       {"warp", Forced::resident_warp, "1-32 lanes per row, 1-8 16-byte loads each, shuffles only"},
       {"block", Forced::resident_block, "a block of 64-1024 threads per row, 4 16-byte loads each"},
       {"looped", Forced::looped, "a block per row in chunks, compensated lane sums"},
       {"split", Forced::split, "row pieces across blocks, partials added in a fixed order"}}};
  register_row_op(r, def);
  r.add_variant(row_baseline(def.op.name, "cub", "cub::DeviceSegmentedReduce::Reduce, float32 accumulator",
                             cub_workspace_bytes, launch_cub));
}

}  // namespace kbench::rows
