// rmsnorm forward: h = x + r, y = h * rsqrt(mean(h^2) + eps) * w, float32 inside.
// Bytes: read x and r (rows x width each) and w (width), write h and y. Simple to fast:
//   eager (baseline): five kernels, as a framework without fusion runs it: the add, the row
//          mean of squares, the rsqrt, the scale by it (a float32 tensor), the weight. h and
//          the scaled copy go through memory.
//   looped: a block per row; pass 1 adds x and r a chunk at a time, writes h (kept in L2) and
//          sums its squares; pass 2 re-reads h, from L2, and writes y.
//   split: few wide rows. Kernel 1 writes h and each piece's sum of squares; kernel 2 adds the
//          row's partials in a fixed order (every block of a row gets the same bits) and writes
//          its piece of y.
//   resident (`single_block`): x and r held in registers, h kept packed, one read of each.
// h is x + r rounded once to the dtype (16-bit pairs in one instruction), the value the
// residual stream stores; y is computed from that h, so that y is the norm of the stored h.
#include <cuda_runtime.h>

#include "core/errors.hpp"
#include "kernels/common/grid.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_device.cuh"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_launch.hpp"

namespace kbench::rows {

Op make_rmsnorm_op();  // rmsnorm_op.cpp

namespace {

// rmsnorm holds two tensors while it loads (x and r), so its resident rows end at 512 threads
// x 4 vectors, as softmax_backward's. Rows of more than 64 vectors take a block of 64 threads
// or more, not a warp: at float32 16384x1024 (256 vectors) the block plan took 67.44 us against
// the 8-vector warp's 72.93 (graph, cold; rmsnorm.json run 96f54f), and at float16 and bfloat16
// 16384x1024 (128 vectors, two a thread in a 64-thread block) 34.60 and 34.86 us against the
// 4-vector warp's 35.98 and 35.89 (run 8d9e84). The rest is the defaults: h is re-read when
// looped, and few rows split below half the SMs.
constexpr RowRules kRules{.max_threads_4 = 512, .auto_resident_vecs = 4 * 512, .warp_max_vecs = 64};

constexpr int kLoopVecs = 4;

struct Tensors {
  const void* x;
  std::int64_t x_stride;
  const void* r;
  std::int64_t r_stride;
  const void* w;
  void* h;
  void* y;
};

// x + r rounded once to T.
template <class T>
__device__ __forceinline__ T add1(T a, T b) {
  if constexpr (kPacked16<T>) return __hadd(a, b);
  else return a + b;
}

template <class T>
__device__ __forceinline__ uint4 add16(const uint4& x, const uint4& r) {
  if constexpr (kPacked16<T>) {
    Pairs16<T> a, b, o;
    a.u = x;
    b.u = r;
#pragma unroll
    for (int j = 0; j < 4; ++j) o.p[j] = __hadd2(a.p[j], b.p[j]);
    return o.u;
  } else {
    Vec16<T> a, b, o;
    a.u = x;
    b.u = r;
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) o.v[j] = a.v[j] + b.v[j];
    return o.u;
  }
}

template <class T>
__device__ __forceinline__ float sumsq16(const uint4& h) {
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) s = fmaf(elem<T>(h, j), elem<T>(h, j), s);
  return s;
}

template <class T>
__device__ __forceinline__ float y1(T h, T w, float rstd) {
  return to_float(h) * rstd * to_float(w);
}

// y for one vector: h * rstd * w, rounded to T (16-bit pairs two at a time: the same bits).
template <class T>
__device__ __forceinline__ Vec16<T> norm16(const uint4& h, const uint4& w, float rstd) {
  Vec16<T> o;
  if constexpr (kPacked16<T>) {
    Pairs16<T> q;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      q.p[j] = pack_pair<T>(elem<T>(h, 2 * j) * rstd * elem<T>(w, 2 * j),
                            elem<T>(h, 2 * j + 1) * rstd * elem<T>(w, 2 * j + 1));
    o.u = q.u;
  } else {
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) o.v[j] = elem<T>(h, j) * rstd * elem<T>(w, j);
  }
  return o;
}

// A plain store: h written in pass 1 is read again in pass 2, so it must not be written
// evict-first as outputs are (store16).
template <class T>
__device__ __forceinline__ void store16_kept(T* p, const uint4& u, bool vec_ok) {
  if (vec_ok) {
    *reinterpret_cast<uint4*>(p) = u;
    return;
  }
  Vec16<T> r;
  r.u = u;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) p[j] = r.v[j];
}

__device__ __forceinline__ float inverse_rms(float sum_squares, int width, float eps) {
  return rsqrtf(sum_squares / static_cast<float>(width) + eps);
}

// ---- resident ------------------------------------------------------------------------------

// Every load of x and r is issued before any arithmetic; h is written as soon as its bits are
// known (before the reduction) and kept packed for y. `Aligned`: see row_parts_for.
template <class T, int K, bool Aligned>
__global__ void __launch_bounds__(kRules.max_threads(K))
    rmsnorm_resident_kernel(Tensors t, std::int64_t rows, int width, int lanes, float eps) {
  __shared__ float scratch[32];
  const auto [row, lane] = resident_slot(lanes);
  const bool active = row < rows;
  const std::int64_t rr = active ? row : 0;
  const T* xr = static_cast<const T*>(t.x) + row_offset(rr, t.x_stride);
  const T* res = static_cast<const T*>(t.r) + row_offset(rr, t.r_stride);
  const T* w = static_cast<const T*>(t.w);
  T* hr = static_cast<T*>(t.h) + row_offset(rr, width);
  T* yr = static_cast<T*>(t.y) + row_offset(rr, width);
  const RowParts p = row_parts_for<T, Aligned>(xr, active ? width : 0);
  const bool r_vec = same_phase_for<Aligned>(xr, res), h_vec = same_phase_for<Aligned>(xr, hr),
             y_vec = same_phase_for<Aligned>(xr, yr), w_vec = same_phase_for<Aligned>(xr, w);

  uint4 hv[K];
  {
    uint4 rx[K], rres[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int v = lane + k * lanes;
      if (v < p.nvec) {
        rx[k] = load16<T, Cache::normal>(xr + p.head + v * kVec<T>, true);
        rres[k] = load16<T, Cache::normal>(res + p.head + v * kVec<T>, r_vec);
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (lane + k * lanes < p.nvec) hv[k] = add16<T>(rx[k], rres[k]);
  }
  const T zero = from_float<T>(0.0f);
  const T hh = lane < p.head ? add1(xr[lane], res[lane]) : zero;
  const T ht = lane < p.tail ? add1(xr[p.tail_begin + lane], res[p.tail_begin + lane]) : zero;
  float ss = to_float(hh) * to_float(hh) + to_float(ht) * to_float(ht);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = lane + k * lanes;
    if (v < p.nvec) {
      ss += sumsq16<T>(hv[k]);
      Vec16<T> o;
      o.u = hv[k];
      store16<T>(hr + p.head + v * kVec<T>, o, h_vec);
    }
  }
  if (lane < p.head) hr[lane] = hh;
  if (lane < p.tail) hr[p.tail_begin + lane] = ht;
  const float rstd = inverse_rms(row_reduce(ss, lanes, scratch, SumOp{}), width, eps);
#pragma unroll
  for (int k = 0; k < K; ++k) keep_packed(hv[k]);  // only the packed h lives across the reduction

#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = lane + k * lanes;
    if (v < p.nvec) {
      const uint4 wv = load16<T, Cache::normal>(w + p.head + v * kVec<T>, w_vec);
      store16<T>(yr + p.head + v * kVec<T>, norm16<T>(hv[k], wv, rstd), y_vec);
    }
  }
  if (lane < p.head) yr[lane] = from_float<T>(y1(hh, w[lane], rstd));
  if (lane < p.tail) yr[p.tail_begin + lane] = from_float<T>(y1(ht, w[p.tail_begin + lane], rstd));
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

Tensors tensors(const LaunchArgs& a) {
  return Tensors{a.inputs[0].data, a.inputs[0].row_stride, a.inputs[1].data, a.inputs[1].row_stride,
                 a.inputs[2].data, a.outputs[0].data, a.outputs[1].data};
}

// x and r are [rows, width] views, w one row of width, h and y contiguous [rows, width].
RowGeometry checked_geometry(const LaunchArgs& a) {
  const std::int64_t rows = rows_of(a.c), width = cols_of(a.c);
  check_row_tensor((a.c.op + " input x").c_str(), a.inputs[0], rows, width, false);
  check_row_tensor((a.c.op + " input r").c_str(), a.inputs[1], rows, width, false);
  check_row_tensor((a.c.op + " input w").c_str(), a.inputs[2], 1, width, true);
  check_row_tensor((a.c.op + " output h").c_str(), a.outputs[0], rows, width, true);
  check_row_tensor((a.c.op + " output y").c_str(), a.outputs[1], rows, width, true);
  return {rows, width, a.inputs[0].row_stride};
}

// The plan's kernels for launch_row_plan (row_launch.hpp).
struct RmsnormKernels : PlanLaunch {
  float eps;

  template <class T, int K>
  void resident() const {
    const Tensors t = tensors(a);
    const std::int64_t w = g.width;
    const bool aligned = rows_aligned(static_cast<const T*>(t.x), t.x_stride, w) &&
                         rows_aligned(static_cast<const T*>(t.r), t.r_stride, w) &&
                         rows_aligned(static_cast<const T*>(t.w), w, w) && rows_aligned(static_cast<const T*>(t.h), w, w) &&
                         rows_aligned(static_cast<const T*>(t.y), w, w);
    const auto kernel = aligned ? rmsnorm_resident_kernel<T, K, true> : rmsnorm_resident_kernel<T, K, false>;
    kernel<<<static_cast<unsigned>(plan.blocks), plan.threads, 0, a.stream>>>(t, g.rows, static_cast<int>(w), plan.lanes, eps);
  }
  template <class T>
  void looped() const {
    rmsnorm_looped_kernel<T><<<static_cast<unsigned>(plan.blocks), plan.threads, 0, a.stream>>>(
        tensors(a), g.rows, static_cast<int>(g.width), eps);
  }
  template <class T>
  void split() const {
    auto* partial = static_cast<float*>(a.workspace);
    const auto blocks = static_cast<unsigned>(g.rows * plan.segments);
    const int w = static_cast<int>(g.width), seg = static_cast<int>(plan.segment);
    rmsnorm_split_h_kernel<T><<<blocks, 256, 0, a.stream>>>(tensors(a), partial, w, plan.segments, seg);
    KB_CUDA_LAUNCH();
    rmsnorm_split_y_kernel<T><<<blocks, 256, 0, a.stream>>>(tensors(a), partial, w, plan.segments, seg, eps);
  }
};

void launch_rmsnorm(const RowPlan& plan, const LaunchArgs& a) {
  const RowGeometry g = checked_geometry(a);
  if (g.rows == 0 || g.width == 0) return;
  launch_row_plan(kRules, plan, a, RmsnormKernels{{plan, a, g}, static_cast<float>(a.c.param("eps"))});
}

// Workspace of the eager baseline: mean squares and rsqrt per row, then the scaled float32 copy.
std::size_t eager_workspace_bytes(const Case& c) {
  return static_cast<std::size_t>(rows_of(c)) * (2 + static_cast<std::size_t>(cols_of(c))) * sizeof(float);
}

void launch_eager(const LaunchArgs& a) {
  const RowGeometry g = checked_geometry(a);
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
       {"split", Forced::split, "h and per-piece sums of squares, then a fixed-order merge and y"}}};
  register_row_op(r, def);
  r.add_variant(row_baseline(def.op.name, "eager", "five kernels: add, mean of squares, rsqrt, scale, weight",
                             eager_workspace_bytes, launch_eager));
}

}  // namespace kbench::rows
