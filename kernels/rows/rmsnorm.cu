// rmsnorm forward: h = x + r, y = h * rsqrt(mean(h^2) + eps) * w, float32 inside.
// Bytes: read x and r (rows x width each) and w (width), write h and y. Simple to fast:
//   eager (baseline): five kernels, as a framework without fusion runs it: the add, the row
//          mean of squares, the rsqrt, the scale by it (a float32 tensor), the weight. h and
//          the scaled copy go through memory.
//   looped: a block per row; pass 1 adds x and r a chunk at a time, writes h (kept in L2) and
//          sums its squares; pass 2 re-reads h, from L2, and writes y.
//   split: few wide rows. Kernel 1 writes h and each piece's sum of squares; kernel 2 adds the
//          row's partials in a fixed order (every block of a row gets the same bits) and writes
//          its piece of y. Kernel 2 is launched overlapping kernel 1 (programmatic dependent
//          launch) and waits inside for its results; split_serial launches it after, the control.
//   resident (`single_block`): x and r held in registers, h kept packed, one read of each.
// h is x + r rounded once to the dtype (16-bit pairs in one instruction), the value the
// residual stream stores; y is computed from that h, so that y is the norm of the stored h.
#include <cuda_runtime.h>

#include "core/errors.hpp"
#include "kernels/common/grid.hpp"
#include "kernels/common/launch_ex.cuh"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_device.cuh"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_launch.hpp"
#include "kernels/rows/rmsnorm_device.cuh"

namespace kbench::rows {

Op make_rmsnorm_op();  // rmsnorm_op.cpp

namespace {

// rmsnorm holds two tensors while it loads (x and r), so its resident rows end at 512 threads
// x 4 vectors, as softmax_backward's; h is re-read when looped. Rows of more than 64 vectors
// take a block of 64 threads or more, not a warp: at 16384x1024 (128 vectors) the block took
// 34.60-34.86 us against the warp's 35.89-35.98 (run 8d9e84). The fit on two bfloat16 grid runs
// of one H200 (archive/grid/grid-20261201T161808Z-bcb37a.json.gz, -161919Z-04732e.json) wanted a
// block past 32 vectors (results/fit/fit-20261201T162123Z-964f3f.json; 1x384: 1.62 us in a
// block, 2.21 in a 16-lane warp), but its grid stops at 8 rows per SM, and past that the warp
// wins by far (configs/grid_outside.json, docs/experiments.md: 16384x384 13.83 us in a block,
// 9.28 in the warp), so that threshold is held; held, the fit keeps the rest
// (results/fit/fit-20261201T171051Z-f90909.json: held-out mean regret 0.9%, 13 of 345 cells
// more than 10% off, against 7.1% and 51 before). From the fit (figures: run bcb37a, graph, warm):
// - every row count below the SMs splits past 16384 elements (66x65536: split 9.55 us, looped
//   18.48; 99x32769: 9.82 against 13.43);
// - the looped chunk is 4096 only up to 4 blocks per SM (8 before).
// Both findings on the warp hold, by row count: below 16 rows per SM (2112 on an H200) rows of
// more than 32 vectors take the block (warp_min_rows_per_sm; bfloat16 132x513: 2.26 us in the
// block, 2.99 in the warp, archive/grid/grid-20261202T020937Z-797454.json.gz; 2112x384: 3.01 in
// the block, 2.76 in the warp, archive/grid/grid-20261202T015842Z-94e234.json.gz).
constexpr RowRules kRules{.max_threads_4 = 512,
                          .auto_resident_vecs = 4 * 512,
                          .warp_max_vecs = 64,
                          .warp_min_rows_per_sm = 16,
                          .split_below_divisor = 1,
                          .split_above_width = 16384,
                          .split_all_sms_above_width = 32768,
                          .chunk_4096_per_sm = 4};

constexpr int kLoopVecs = 4;

using Tensors = RmsnormTensors;

// ---- resident ------------------------------------------------------------------------------

// x and r held in registers (rmsnorm_resident_row in rmsnorm_device.cuh, shared with kbench
// spec's builds). `Aligned`: see row_parts_for.
template <class T, int K, bool Aligned>
__global__ void __launch_bounds__(kRules.max_threads(K))
    rmsnorm_resident_kernel(Tensors t, std::int64_t rows, int width, int lanes, float eps) {
  trigger_next_grid();  // a step's backward may start launching now: it waits inside for this grid's end
  rmsnorm_resident_row<T, K, Aligned>(t, rows, width, lanes, eps);
}

// ---- looped and split: two passes ----------------------------------------------------------

// Pass 1 over n elements: h = x + r written (kept in L2 for pass 2); returns this thread's
// compensated sum of squares. `p` is x's parts of the row (piece).
template <class T>
__device__ __forceinline__ float write_h(const T* xr, const T* res, T* hr, const RowParts& p) {
  const int step = blockDim.x * kLoopVecs, t = threadIdx.x;
  const bool r_vec = same_phase(xr, res), h_vec = same_phase(xr, hr);
  KahanSum acc;
  for (int base = 0; base < p.nvec; base += step) {
    uint4 rx[kLoopVecs], rres[kLoopVecs];
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k) {
      const int v = base + t + k * blockDim.x;
      if (v < p.nvec) {
        rx[k] = load16<T, Cache::normal>(xr + p.head + v * kVec<T>, true);
        rres[k] = load16<T, Cache::normal>(res + p.head + v * kVec<T>, r_vec);
      }
    }
    float part = 0.0f;
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k) {
      const int v = base + t + k * blockDim.x;
      if (v < p.nvec) {
        const uint4 h = add16<T>(rx[k], rres[k]);
        part += sumsq16<T>(h);
        store16_kept<T>(hr + p.head + v * kVec<T>, h, h_vec);
      }
    }
    acc.add(part);
  }
  float edge = 0.0f;
  for (const int i : {t < p.head ? t : -1, t < p.tail ? p.tail_begin + t : -1}) {
    if (i < 0) continue;
    const T h = add1(xr[i], res[i]);
    hr[i] = h;
    edge += to_float(h) * to_float(h);
  }
  acc.add(edge);
  return acc.value();
}

// Pass 2 over n elements of h (contiguous, so h and y share their 16-byte phase): y = h * rstd * w.
template <class T>
__device__ __forceinline__ void write_y(const T* hr, const T* w, T* yr, int n, float rstd) {
  const RowParts p = row_parts(hr, n);
  const int step = blockDim.x * kLoopVecs, t = threadIdx.x;
  const bool w_vec = same_phase(hr, w), y_vec = same_phase(hr, yr);
  for (int base = 0; base < p.nvec; base += step) {
    uint4 rh[kLoopVecs], rw[kLoopVecs];
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k) {
      const int v = base + t + k * blockDim.x;
      if (v < p.nvec) {
        rh[k] = load16<T, Cache::last_use>(hr + p.head + v * kVec<T>, true);
        rw[k] = load16<T, Cache::normal>(w + p.head + v * kVec<T>, w_vec);
      }
    }
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k) {
      const int v = base + t + k * blockDim.x;
      if (v < p.nvec) store16<T>(yr + p.head + v * kVec<T>, norm16<T>(rh[k], rw[k], rstd), y_vec);
    }
  }
  if (t < p.head) yr[t] = from_float<T>(y1(hr[t], w[t], rstd));
  if (t < p.tail) yr[p.tail_begin + t] = from_float<T>(y1(hr[p.tail_begin + t], w[p.tail_begin + t], rstd));
}

template <class T>
__global__ void __launch_bounds__(1024) rmsnorm_looped_kernel(Tensors t, std::int64_t rows, int width, float eps) {
  __shared__ float scratch[32];
  trigger_next_grid();  // a step's backward may start launching now: it waits inside for this grid's end
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = static_cast<const T*>(t.x) + row_offset(row, t.x_stride);
    const T* res = static_cast<const T*>(t.r) + row_offset(row, t.r_stride);
    T* hr = static_cast<T*>(t.h) + row_offset(row, width);
    const float ss = block_reduce(write_h(xr, res, hr, row_parts(xr, width)), scratch, SumOp{});  // ends with a barrier
    write_y(hr, static_cast<const T*>(t.w), static_cast<T*>(t.y) + row_offset(row, width), width,
            inverse_rms(ss, width, eps));
  }
}

template <class T>
__global__ void __launch_bounds__(256) rmsnorm_split_h_kernel(Tensors t, float* __restrict__ partial, int width,
                                                               int segments, int segment) {
  __shared__ float scratch[32];
  trigger_next_grid();  // the y kernel's blocks may take the SMs this grid's last wave leaves
  const std::int64_t row = blockIdx.x / segments;
  const int begin = (blockIdx.x % segments) * segment;
  const T* xr = static_cast<const T*>(t.x) + row_offset(row, t.x_stride) + begin;
  const T* res = static_cast<const T*>(t.r) + row_offset(row, t.r_stride) + begin;
  T* hr = static_cast<T*>(t.h) + row_offset(row, width) + begin;
  const float ss = block_reduce(write_h(xr, res, hr, row_parts(xr, min(segment, width - begin))), scratch, SumOp{});
  if (threadIdx.x == 0) partial[blockIdx.x] = ss;
}

template <class T>
__global__ void __launch_bounds__(256) rmsnorm_split_y_kernel(Tensors t, const float* __restrict__ partial,
                                                               int width, int segments, int segment, float eps) {
  __shared__ float scratch[32];
  wait_for_previous_grid();  // launched overlapping the h kernel: its h and partials first
  trigger_next_grid();  // a step's backward may start launching now: it waits inside for this grid's end
  const std::int64_t row = blockIdx.x / segments;
  const int begin = (blockIdx.x % segments) * segment;
  KahanSum acc;  // fixed order: every block of the row gets the same bits
  for (int i = threadIdx.x; i < segments; i += blockDim.x) acc.add(partial[row * segments + i]);
  const float rstd = inverse_rms(block_reduce(acc.value(), scratch, SumOp{}), width, eps);
  const std::int64_t at = row_offset(row, width) + begin;
  write_y(static_cast<const T*>(t.h) + at, static_cast<const T*>(t.w) + begin, static_cast<T*>(t.y) + at,
          min(segment, width - begin), rstd);
}

// ---- eager: five kernels -------------------------------------------------------------------

enum class EagerStep { add, scale, weight };

// One elementwise step over every row, element by element (the framework's kernels are
// vectorized, but this baseline is about the passes over memory, which it keeps):
//   add:    h = x + r            (a, b: x and r; out: h)
//   scale:  s = h * rstd[row]    (a: h; out: s, float32)
//   weight: y = s * w            (a: s, float32; b: w; out: y)
template <class T, EagerStep S>
__global__ void __launch_bounds__(256) rmsnorm_eager_map_kernel(const void* a, std::int64_t a_stride, const void* b,
                                                                 std::int64_t b_stride, const float* rstd, void* out,
                                                                 std::int64_t rows, int width) {
  const std::int64_t n = rows * width;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / width, col = i % width;
    if constexpr (S == EagerStep::add) {
      static_cast<T*>(out)[i] = add1(static_cast<const T*>(a)[row * a_stride + col], static_cast<const T*>(b)[row * b_stride + col]);
    } else if constexpr (S == EagerStep::scale) {
      static_cast<float*>(out)[i] = to_float(static_cast<const T*>(a)[i]) * rstd[row];
    } else {
      static_cast<T*>(out)[i] = from_float<T>(static_cast<const float*>(a)[i] * to_float(static_cast<const T*>(b)[col]));
    }
  }
}

// A block per row: ms[row] = mean(h^2) in float32.
template <class T>
__global__ void __launch_bounds__(256) rmsnorm_eager_mean_squares_kernel(const T* h, float* ms, int width) {
  __shared__ float scratch[32];
  const T* hr = h + static_cast<std::int64_t>(blockIdx.x) * width;
  KahanSum acc;
  for (int i = threadIdx.x; i < width; i += blockDim.x) acc.add(to_float(hr[i]) * to_float(hr[i]));
  const float s = block_reduce(acc.value(), scratch, SumOp{});
  if (threadIdx.x == 0) ms[blockIdx.x] = s / static_cast<float>(width);
}

__global__ void rmsnorm_eager_rsqrt_kernel(const float* ms, float* rstd, std::int64_t rows, float eps) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < rows) rstd[i] = rsqrtf(ms[i] + eps);
}

// ---- launchers -----------------------------------------------------------------------------

// The plan's kernels for launch_row_plan (row_launch.hpp).
struct RmsnormKernels : PlanLaunch {
  float eps;

  template <class T, int K>
  void resident() const {
    const Tensors t = rmsnorm_tensors(a);
    const std::int64_t w = g.width;
    const bool aligned = rmsnorm_rows_aligned<T>(t, w);
    const auto kernel = aligned ? rmsnorm_resident_kernel<T, K, true> : rmsnorm_resident_kernel<T, K, false>;
    kernel<<<static_cast<unsigned>(plan.blocks), plan.threads, 0, a.stream>>>(t, g.rows, static_cast<int>(w), plan.lanes, eps);
  }
  template <class T>
  void looped() const {
    rmsnorm_looped_kernel<T><<<static_cast<unsigned>(plan.blocks), plan.threads, 0, a.stream>>>(
        rmsnorm_tensors(a), g.rows, static_cast<int>(g.width), eps);
  }
  // The y kernel is launched to overlap the h kernel (programmatic dependent launch, sm_90): its
  // blocks start as the h kernel's last wave frees SMs and wait inside for h and the partials,
  // so the second launch and its first wave are not a gap between the two. Against split_serial
  // in the same visits (H100, results/sweep/sweep-20261207T150929Z-5fc37a.json): 1.4-2.6 us less
  // launched into a stream (events), level to 0.5 us less in a CUDA graph, which has no such gap.
  template <class T>
  void split() const {
    auto* partial = static_cast<float*>(a.workspace);
    const auto blocks = static_cast<unsigned>(g.rows * plan.segments);
    const int w = static_cast<int>(g.width), seg = static_cast<int>(plan.segment);
    rmsnorm_split_h_kernel<T><<<blocks, 256, 0, a.stream>>>(rmsnorm_tensors(a), partial, w, plan.segments, seg);
    KB_CUDA_LAUNCH();
    KB_CUDA(launch_ex(rmsnorm_split_y_kernel<T>, second({.grid = dim3(blocks), .block = dim3(256)}), rmsnorm_tensors(a),
                      static_cast<const float*>(partial), w, plan.segments, seg, eps));
  }
};

void launch_rmsnorm(const RowPlan& plan, const LaunchArgs& a) {
  const RowGeometry g = checked_rmsnorm_geometry(a);
  if (g.rows == 0 || g.width == 0) return;
  launch_row_plan(kRules, plan, a, RmsnormKernels{{plan, a, g}, static_cast<float>(a.c.param("eps"))});
}

// Workspace of the eager baseline: mean squares and rsqrt per row, then the scaled float32 copy.
std::size_t eager_workspace_bytes(const Case& c) {
  return static_cast<std::size_t>(rows_of(c)) * (2 + static_cast<std::size_t>(cols_of(c))) * sizeof(float);
}

void launch_eager(const LaunchArgs& a) {
  const RowGeometry g = checked_rmsnorm_geometry(a);
  if (g.rows == 0 || g.width == 0) return;
  float* ms = float_workspace(a);
  float* rstd = ms + g.rows;
  float* scaled = rstd + g.rows;
  const int w = static_cast<int>(g.width);
  const unsigned blocks = grid_stride_blocks(g.rows * g.width, 256);
  dispatch_dtype(a.c.dtype, [&]<class T>() {
    const DeviceTensor &x = a.inputs[0], &r = a.inputs[1];
    rmsnorm_eager_map_kernel<T, EagerStep::add><<<blocks, 256, 0, a.stream>>>(
        x.data, x.row_stride, r.data, r.row_stride, nullptr, a.outputs[0].data, g.rows, w);
    KB_CUDA_LAUNCH();
    rmsnorm_eager_mean_squares_kernel<T><<<static_cast<unsigned>(g.rows), 256, 0, a.stream>>>(a.outputs[0].as<const T>(), ms, w);
    KB_CUDA_LAUNCH();
    rmsnorm_eager_rsqrt_kernel<<<static_cast<unsigned>((g.rows + 255) / 256), 256, 0, a.stream>>>(
        ms, rstd, g.rows, static_cast<float>(a.c.param("eps")));
    KB_CUDA_LAUNCH();
    rmsnorm_eager_map_kernel<T, EagerStep::scale><<<blocks, 256, 0, a.stream>>>(
        a.outputs[0].data, g.width, nullptr, 0, rstd, scaled, g.rows, w);
    KB_CUDA_LAUNCH();
    rmsnorm_eager_map_kernel<T, EagerStep::weight><<<blocks, 256, 0, a.stream>>>(
        scaled, g.width, a.inputs[2].data, 0, nullptr, a.outputs[1].data, g.rows, w);
  });
  KB_CUDA_LAUNCH();
}

}  // namespace

void register_rmsnorm(Registry& r) {
  const RowOpDefinition def{
      make_rmsnorm_op(), kRules, launch_rmsnorm,
      {{"auto", std::nullopt, "follows row_plan"},
       {"block", Forced::resident_block, "a block of 64-512 threads per row, x and r in registers"},
       {"single_block", Forced::resident_any, "x and r held in registers, h kept packed: one read of each"},
       {"looped", Forced::looped, "h written and summed a chunk at a time, then re-read from L2"},
       {"split", Forced::split, "h and per-piece sums of squares, then a fixed-order merge and y"},
       // The y kernel launched after the h kernel ends (its wait inside returns at once): timed
       // beside split, in the same visits, it shows what the overlap is worth.
       {"split_serial", Forced::split, "split with y's kernel launched after h's ends, not overlapping it (the control)", true}}};
  register_row_op(r, def);
  r.add_variant(row_baseline(def.op.name, "eager", "five kernels: add, mean of squares, rsqrt, scale, weight",
                             eager_workspace_bytes, launch_eager));
}

}  // namespace kbench::rows
