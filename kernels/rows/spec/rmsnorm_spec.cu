// rmsnorm forward built three ways for `kbench spec` (spec_builds.hpp): the same resident plan
// and the same arithmetic, with less or more of the sizes known to the compiler.
//   runtime: each thread loops over its vectors (a runtime count) twice: pass 1 reads x and r,
//            writes h = x + r (a plain store, so it stays in L2) and sums its squares; pass 2
//            reads its own h back, from L2, with w, and writes y, as a fused add-and-norm
//            kernel without a register array does. Bytes from DRAM are the resident plan's
//            when the re-read hits; it issues one more load per vector.
//   template_vecs / template_width: rmsnorm_resident_row (rmsnorm_device.cuh), x and r held in
//            K x 16 bytes of registers each, h kept packed for y.
#include <cuda_runtime.h>

#include "core/errors.hpp"
#include "kernels/common/dispatch.cuh"
#include "kernels/rows/rmsnorm_device.cuh"
#include "kernels/rows/row_launch.hpp"
#include "kernels/rows/spec/spec_select.cuh"

namespace kbench::rows::spec {
namespace {

template <class T>
__global__ void __launch_bounds__(kRuntimeMaxThreads)
    rmsnorm_runtime_kernel(RmsnormTensors t, std::int64_t rows, int width, int lanes, float eps) {
  __shared__ float scratch[32];
  const auto [row, lane] = resident_slot(lanes);
  // The resident row's preamble (rmsnorm_resident_row), kept as it is there: the same lines
  // returned from a helper changed the production kernel's code (a spill at float16, 4 vectors).
  const bool active = row < rows;
  const std::int64_t rr = active ? row : 0;
  const T* xr = static_cast<const T*>(t.x) + row_offset(rr, t.x_stride);
  const T* res = static_cast<const T*>(t.r) + row_offset(rr, t.r_stride);
  const T* w = static_cast<const T*>(t.w);
  T* hr = static_cast<T*>(t.h) + row_offset(rr, width);
  T* yr = static_cast<T*>(t.y) + row_offset(rr, width);
  const RowParts p = row_parts(xr, active ? width : 0);
  const bool r_vec = same_phase(xr, res), h_vec = same_phase(xr, hr), y_vec = same_phase(xr, yr),
             w_vec = same_phase(xr, w);

  // The same additions in the same order as the resident row's: head and tail, then each vector.
  const T zero = from_float<T>(0.0f);
  const T hh = lane < p.head ? add1(xr[lane], res[lane]) : zero;
  const T ht = lane < p.tail ? add1(xr[p.tail_begin + lane], res[p.tail_begin + lane]) : zero;
  float ss = to_float(hh) * to_float(hh) + to_float(ht) * to_float(ht);
  for (int v = lane; v < p.nvec; v += lanes) {
    const int at = p.head + v * kVec<T>;
    const uint4 h = add16<T>(load16<T, Cache::normal>(xr + at, true), load16<T, Cache::normal>(res + at, r_vec));
    ss += sumsq16<T>(h);
    store16_kept<T>(hr + at, h, h_vec);
  }
  if (lane < p.head) hr[lane] = hh;
  if (lane < p.tail) hr[p.tail_begin + lane] = ht;
  const float rstd = inverse_rms(row_reduce(ss, lanes, scratch, SumOp{}), width, eps);

  for (int v = lane; v < p.nvec; v += lanes) {
    const int at = p.head + v * kVec<T>;
    const uint4 h = load16<T, Cache::last_use>(hr + at, h_vec);  // this thread's own h, written above
    store16<T>(yr + at, norm16<T>(h, load16<T, Cache::normal>(w + at, w_vec), rstd), y_vec);
  }
  if (lane < p.head) yr[lane] = from_float<T>(y1(hh, w[lane], rstd));
  if (lane < p.tail) yr[p.tail_begin + lane] = from_float<T>(y1(ht, w[p.tail_begin + lane], rstd));
}

// The launch bound is the op's for K vectors (rmsnorm.cu's), whatever is fixed besides.
template <class T, int K, bool Aligned, int W, int L>
__global__ void __launch_bounds__(kRmsnormSpecRules.max_threads(K))
    rmsnorm_fixed_kernel(RmsnormTensors t, std::int64_t rows, int width, int lanes, float eps) {
  rmsnorm_resident_row<T, K, Aligned, W, L>(t, rows, width, lanes, eps);
}

struct RmsnormKernels {
  static constexpr SpecRules kRules = kRmsnormSpecRules;
  template <class T>
  using Kernel = void (*)(RmsnormTensors, std::int64_t, int, int, float);
  template <class T>
  static Kernel<T> runtime() {
    return rmsnorm_runtime_kernel<T>;
  }
  template <class T, int K, bool Aligned, int W, int L>
  static Kernel<T> fixed() {
    return rmsnorm_fixed_kernel<T, K, Aligned, W, L>;
  }
};

void launch(Build b, const LaunchArgs& a) {
  const RowGeometry g = checked_rmsnorm_geometry(a);
  if (g.rows == 0 || g.width == 0) return;
  const RowPlan plan = spec_plan(a.c);
  const int w = static_cast<int>(g.width);
  const RmsnormTensors t = rmsnorm_tensors(a);
  const auto eps = static_cast<float>(a.c.param("eps"));
  dispatch_dtype(a.c.dtype, [&]<class T>() {
    const auto k = select_build<RmsnormKernels, T>(b, w, plan, rmsnorm_rows_aligned<T>(t, g.width));
    k.kernel<<<static_cast<unsigned>(plan.blocks), plan.threads, 0, a.stream>>>(t, g.rows, w, plan.lanes, eps);
  });
  KB_CUDA_LAUNCH();
}

}  // namespace

SpecOp rmsnorm_spec() { return {launch, attributes_of<RmsnormKernels>}; }

}  // namespace kbench::rows::spec
