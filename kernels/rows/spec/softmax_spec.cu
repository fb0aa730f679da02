// softmax built three ways for `kbench spec` (spec_builds.hpp): the same resident plan and the
// same arithmetic, with less or more of the sizes known to the compiler.
//   runtime: each thread loops over its vectors (v = lane, lane + lanes, ... < nvec: a runtime
//            count) three times, for the max, the sum of exps and the output, reading x each
//            time (the second and third reads come from L1/L2); nothing is held across the
//            reductions but two floats. Bytes from DRAM are the resident plan's when the
//            re-reads hit; instructions per element are more (three loads, exp twice).
//   template_vecs / template_width: softmax_resident_row (softmax_device.cuh), the row in
//            K x 16 bytes of registers per thread, x read once.
#include <cuda_runtime.h>

#include "core/errors.hpp"
#include "kernels/common/dispatch.cuh"
#include "kernels/rows/row_launch.hpp"
#include "kernels/rows/softmax_device.cuh"
#include "kernels/rows/spec/spec_select.cuh"

namespace kbench::rows::spec {
namespace {

template <class T>
__global__ void __launch_bounds__(kRuntimeMaxThreads)
    softmax_runtime_kernel(const T* __restrict__ x, std::int64_t x_stride, T* __restrict__ y, std::int64_t rows,
                           int width, int lanes) {
  __shared__ float scratch[32];
  const auto [row, lane] = resident_slot(lanes);
  const bool active = row < rows;
  const T* xr = x + row_offset(active ? row : 0, x_stride);
  T* yr = y + row_offset(active ? row : 0, width);
  const RowParts p = row_parts(xr, active ? width : 0);
  const T* xv = xr + p.head;  // the row's vectors
  const float xh = lane < p.head ? to_float(xr[lane]) : -INFINITY;
  const float xt = lane < p.tail ? to_float(xr[p.tail_begin + lane]) : -INFINITY;

  float m = fmaxf(xh, xt);
  for (int v = lane; v < p.nvec; v += lanes) {
    const uint4 u = load16<T, Cache::normal>(xv + v * kVec<T>, true);
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) m = fmaxf(m, elem<T>(u, j));
  }
  const float shift = safe_shift(row_reduce(m, lanes, scratch, MaxOp{}));

  // The same additions in the same order as the resident row's: head and tail, then each vector.
  float s = exp_diff(xh - shift) + exp_diff(xt - shift);
  for (int v = lane; v < p.nvec; v += lanes) {
    const uint4 u = load16<T, Cache::normal>(xv + v * kVec<T>, true);
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) s += exp_diff(elem<T>(u, j) - shift);
  }
  const float inv = 1.0f / row_reduce(s, lanes, scratch, SumOp{});

  const bool y_vec = same_phase(xr, yr);
  for (int v = lane; v < p.nvec; v += lanes)
    store16<T>(yr + p.head + v * kVec<T>, normalize16<T>(load16<T, Cache::last_use>(xv + v * kVec<T>, true), shift, inv),
               y_vec);
  if (lane < p.head) yr[lane] = from_float<T>(exp_diff(xh - shift) * inv);
  if (lane < p.tail) yr[p.tail_begin + lane] = from_float<T>(exp_diff(xt - shift) * inv);
}

// The launch bound is the op's for K vectors (softmax.cu's), whatever is fixed besides.
template <class T, int K, bool Aligned, int W, int L>
__global__ void __launch_bounds__(kSoftmaxSpecRules.max_threads(K))
    softmax_fixed_kernel(const T* __restrict__ x, std::int64_t x_stride, T* __restrict__ y, std::int64_t rows,
                         int width, int lanes) {
  softmax_resident_row<T, K, Aligned, W, L>(x, x_stride, y, rows, width, lanes);
}

struct SoftmaxKernels {
  static constexpr SpecRules kRules = kSoftmaxSpecRules;
  template <class T>
  using Kernel = void (*)(const T*, std::int64_t, T*, std::int64_t, int, int);
  template <class T>
  static Kernel<T> runtime() {
    return softmax_runtime_kernel<T>;
  }
  template <class T, int K, bool Aligned, int W, int L>
  static Kernel<T> fixed() {
    return softmax_fixed_kernel<T, K, Aligned, W, L>;
  }
};

void launch(Build b, const LaunchArgs& a) {
  const RowGeometry g = checked_row_geometry(a, {cols_of(a.c)});
  if (g.rows == 0 || g.width == 0) return;
  const RowPlan plan = spec_plan(a.c);
  const int w = static_cast<int>(g.width);
  dispatch_dtype(a.c.dtype, [&]<class T>() {
    const T* x = a.inputs[0].as<const T>();
    T* y = a.outputs[0].as<T>();
    const bool aligned = rows_aligned(x, g.stride, g.width) && rows_aligned(y, g.width, g.width);
    const auto k = select_build<SoftmaxKernels, T>(b, w, plan, aligned);
    k.kernel<<<static_cast<unsigned>(plan.blocks), plan.threads, 0, a.stream>>>(x, g.stride, y, g.rows, w, plan.lanes);
  });
  KB_CUDA_LAUNCH();
}

}  // namespace

SpecOp softmax_spec() { return {launch, attributes_of<SoftmaxKernels>}; }

}  // namespace kbench::rows::spec
