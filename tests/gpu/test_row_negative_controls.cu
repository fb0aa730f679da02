// Negative controls for the row ops' oracle check: kernels broken on purpose, written here and
// compiled only into the test binary (the kernels kbench times carry no fault switch). Each is
// a plain block-per-row kernel with one defect the predecessor or this project once had:
//   - a row_sum, softmax or rmsnorm that drops the row's last chunk (neither counted nor written);
//   - a softmax_backward that loses one warp's part of dot(y, dy);
//   - an rmsnorm_backward that loses the dh term, skips a row, or sums dw in 16 bits.
// Each must fail the check in every dtype, and the same kernel with the defect switched off
// must pass it, so that it is the defect the check sees.
#include <gtest/gtest.h>

#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/common/dispatch.cuh"
#include "kernels/rows/row_device.cuh"

namespace kbench::rows {
namespace {

constexpr int kThreads = 256;
constexpr int kChunk = kThreads * 4;  // elements a block covers per step

// Where a broken kernel stops: the start of the row's last chunk, or the row's end.
__device__ int row_end(int width, bool drop_last_chunk) {
  return drop_last_chunk && width > 0 ? (width - 1) / kChunk * kChunk : width;
}

template <class T, bool DropLastChunk>
__global__ void row_sum_kernel(const T* x, std::int64_t stride, T* y, int width) {
  __shared__ float scratch[32];
  const T* xr = x + blockIdx.x * stride;
  const int end = row_end(width, DropLastChunk);
  float s = 0.0f;
  for (int i = threadIdx.x; i < end; i += kThreads) s += to_float(xr[i]);
  s = block_reduce(s, scratch, SumOp{});
  if (threadIdx.x == 0) y[blockIdx.x] = from_float<T>(s);
}

template <class T, bool DropLastChunk>
__global__ void softmax_kernel(const T* x, std::int64_t stride, T* y, int width) {
  __shared__ float scratch[32];
  const T* xr = x + blockIdx.x * stride;
  T* yr = y + static_cast<std::int64_t>(blockIdx.x) * width;
  const int end = row_end(width, DropLastChunk);
  float m = -INFINITY;
  for (int i = threadIdx.x; i < end; i += kThreads) m = fmaxf(m, to_float(xr[i]));
  const float shift = safe_shift(block_reduce(m, scratch, MaxOp{}));
  float s = 0.0f;
  for (int i = threadIdx.x; i < end; i += kThreads) s += exp_diff(to_float(xr[i]) - shift);
  const float inv = 1.0f / block_reduce(s, scratch, SumOp{});
  for (int i = threadIdx.x; i < end; i += kThreads) yr[i] = from_float<T>(exp_diff(to_float(xr[i]) - shift) * inv);
}

// Warp 0 always holds data (the row's first elements), so losing its part loses something.
template <class T, bool LoseWarpZero>
__global__ void softmax_backward_kernel(const T* y, std::int64_t y_stride, const T* dy, std::int64_t dy_stride,
                                        T* dx, int width) {
  __shared__ float scratch[32];
  const T* yr = y + blockIdx.x * y_stride;
  const T* dyr = dy + blockIdx.x * dy_stride;
  T* dxr = dx + static_cast<std::int64_t>(blockIdx.x) * width;
  float dot = 0.0f;
  for (int i = threadIdx.x; i < width; i += kThreads) dot += to_float(yr[i]) * to_float(dyr[i]);
  if (LoseWarpZero && threadIdx.x < 32) dot = 0.0f;
  dot = block_reduce(dot, scratch, SumOp{});
  for (int i = threadIdx.x; i < width; i += kThreads)
    dxr[i] = from_float<T>(to_float(yr[i]) * (to_float(dyr[i]) - dot));
}

// x + r rounded once to T, as the oracle rounds the exact sum (float32 first, then a 16-bit
// type, would round twice).
template <class T>
__device__ T add_rounded(T a, T b) {
  if constexpr (sizeof(T) == 2) return __hadd(a, b);
  else return a + b;
}

template <class T, bool DropLastChunk>
__global__ void rmsnorm_kernel(const T* x, std::int64_t x_stride, const T* r, std::int64_t r_stride, const T* w,
                               T* h, T* y, int width, float eps) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const int end = row_end(width, DropLastChunk);
  float ss = 0.0f;
  for (int i = threadIdx.x; i < end; i += kThreads) {
    const T v = add_rounded(x[row * x_stride + i], r[row * r_stride + i]);
    h[row * width + i] = v;
    ss += to_float(v) * to_float(v);
  }
  const float rstd = rsqrtf(block_reduce(ss, scratch, SumOp{}) / width + eps);
  for (int i = threadIdx.x; i < end; i += kThreads)
    y[row * width + i] = from_float<T>(to_float(h[row * width + i]) * rstd * to_float(w[i]));
}

enum class BackwardDefect { none, lost_dh, skipped_row, half_dw };

// dx of row blockIdx.x (dh absent or lost: not added; the skipped row: not written).
template <class T, BackwardDefect D>
__global__ void rmsnorm_backward_dx_kernel(const T* h, std::int64_t h_stride, const T* w, const T* dy,
                                           std::int64_t dy_stride, const T* dh, std::int64_t dh_stride, T* dx,
                                           float* rstd_out, int width, float eps) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  if (D == BackwardDefect::skipped_row && row == gridDim.x - 1) return;
  float ss = 0.0f, sg = 0.0f;
  for (int i = threadIdx.x; i < width; i += kThreads) {
    const float hv = to_float(h[row * h_stride + i]);
    ss += hv * hv;
    sg += to_float(dy[row * dy_stride + i]) * to_float(w[i]) * hv;
  }
  ss = block_reduce(ss, scratch, SumOp{});
  sg = block_reduce(sg, scratch, SumOp{});
  const float rstd = rsqrtf(ss / width + eps), coef = rstd * rstd * rstd * sg / width;
  if (threadIdx.x == 0) rstd_out[row] = rstd;
  for (int i = threadIdx.x; i < width; i += kThreads) {
    const float g = to_float(dy[row * dy_stride + i]) * to_float(w[i]);
    float v = rstd * g - to_float(h[row * h_stride + i]) * coef;
    if (dh && D != BackwardDefect::lost_dh) v += to_float(dh[row * dh_stride + i]);
    dx[row * width + i] = from_float<T>(v);
  }
}

// dw[c] = sum over rows of dy h rstd, a column per thread; the half_dw defect sums in float16.
template <class T, BackwardDefect D>
__global__ void rmsnorm_backward_dw_kernel(const T* h, std::int64_t h_stride, const T* dy, std::int64_t dy_stride,
                                           const float* rstd, T* dw, std::int64_t rows, int width) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= width) return;
  KahanSum s;  // compensated, so that the intact kernel is a reference, not a near miss
  __half s16 = __float2half(0.0f);
  for (std::int64_t row = 0; row < rows; ++row) {
    if (D == BackwardDefect::skipped_row && row == rows - 1) continue;
    const float term = to_float(dy[row * dy_stride + c]) * to_float(h[row * h_stride + c]) * rstd[row];
    if constexpr (D == BackwardDefect::half_dw) s16 = __hadd(s16, __float2half(term));
    else s.add(term);
  }
  dw[c] = from_float<T>(D == BackwardDefect::half_dw ? __half2float(s16) : s.value());
}

template <BackwardDefect D>
Variant rmsnorm_backward_variant() {
  Variant v = make_variant("rmsnorm_backward", D == BackwardDefect::none ? "intact" : "broken", "a negative control",
                           [](const LaunchArgs& a) {
                             const auto rows = static_cast<unsigned>(a.c.shape[0]);
                             const int width = static_cast<int>(a.c.shape[1]);
                             const float eps = static_cast<float>(a.c.param("eps"));
                             const bool dh = a.c.param("dh") != 0;
                             auto* rstd = static_cast<float*>(a.workspace);
                             dispatch_dtype(a.c.dtype, [&]<class T>() {
                               const DeviceTensor &h = a.inputs[0], &w = a.inputs[1], &dy = a.inputs[2];
                               const T* dhp = dh ? a.inputs[3].as<const T>() : nullptr;
                               const std::int64_t dhs = dh ? a.inputs[3].row_stride : 0;
                               rmsnorm_backward_dx_kernel<T, D><<<rows, kThreads, 0, a.stream>>>(
                                   h.as<const T>(), h.row_stride, w.as<const T>(), dy.as<const T>(), dy.row_stride, dhp,
                                   dhs, a.outputs[0].as<T>(), rstd, width, eps);
                               rmsnorm_backward_dw_kernel<T, D><<<(width + 255) / 256, 256, 0, a.stream>>>(
                                   h.as<const T>(), h.row_stride, dy.as<const T>(), dy.row_stride, rstd,
                                   a.outputs[1].as<T>(), rows, width);
                             });
                             KB_CUDA_LAUNCH();
                           });
  v.workspace_bytes = [](const Case& c) { return static_cast<std::size_t>(c.shape[0]) * sizeof(float); };
  return v;
}

template <bool Broken>
Variant variant_of(const std::string& op) {
  return make_variant(op, Broken ? "broken" : "intact", "a negative control", [](const LaunchArgs& a) {
    const auto rows = static_cast<unsigned>(a.c.shape[0]);
    const int width = static_cast<int>(a.c.shape[1]);
    const DeviceTensor &in = a.inputs[0], &out = a.outputs[0];
    dispatch_dtype(a.c.dtype, [&]<class T>() {
      if (a.c.op == "row_sum")
        row_sum_kernel<T, Broken><<<rows, kThreads, 0, a.stream>>>(in.as<const T>(), in.row_stride, out.as<T>(), width);
      else if (a.c.op == "softmax")
        softmax_kernel<T, Broken><<<rows, kThreads, 0, a.stream>>>(in.as<const T>(), in.row_stride, out.as<T>(), width);
      else if (a.c.op == "rmsnorm")
        rmsnorm_kernel<T, Broken><<<rows, kThreads, 0, a.stream>>>(
            in.as<const T>(), in.row_stride, a.inputs[1].as<const T>(), a.inputs[1].row_stride, a.inputs[2].as<const T>(),
            out.as<T>(), a.outputs[1].as<T>(), width, static_cast<float>(a.c.param("eps")));
      else
        softmax_backward_kernel<T, Broken><<<rows, kThreads, 0, a.stream>>>(
            in.as<const T>(), in.row_stride, a.inputs[1].as<const T>(), a.inputs[1].row_stride, out.as<T>(), width);
    });
    KB_CUDA_LAUNCH();
  });
}

TEST(RowsGpu, CheckerRejectsBrokenKernels) {
  KB_REQUIRE_GPU();
  struct Control {
    const char* op;
    Shape shape;
  };
  // 32769 wide: the last chunk holds one element; 760 and 4096: rows of one chunk or several.
  const Control controls[] = {{"row_sum", {8, 32769}},          {"row_sum", {131, 8193}},
                              {"softmax", {8, 32769}},          {"softmax", {4, 2049}},
                              {"softmax_backward", {199, 760}}, {"softmax_backward", {64, 4096}},
                              {"softmax_backward", {8, 32769}}, {"rmsnorm", {8, 32769}},
                              {"rmsnorm", {64, 1025}}};
  int checked = 0;
  for (const Control& control : controls)
    for (DType dt : kAllDTypes) {
      const Case c = make_case(registry().op(control.op), dt, control.shape);
      Rng rng(5);
      const PreparedCase pc = prepare_case(registry().op(control.op), c, rng);
      EXPECT_FALSE(check_variant(pc, variant_of<true>(control.op), nullptr).passed)
          << case_label(c) << ": the broken kernel passed";
      const CheckInfo intact = check_variant(pc, variant_of<false>(control.op), nullptr);
      EXPECT_TRUE(intact.passed) << case_label(c) << ": " << intact.detail;
      ++checked;
    }
  EXPECT_EQ(checked, 9 * 3);
}

TEST(RowsGpu, CheckerRejectsBrokenRmsnormBackward) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("rmsnorm_backward");
  int checked = 0;
  // 512 rows: a float16 sum of 512 terms of up to ~4 is off by far more than the dw tolerance.
  for (DType dt : kAllDTypes) {
    Rng rng(6);
    const Case c = make_case(op, dt, {512, 1000});
    const PreparedCase pc = prepare_case(op, c, rng);
    EXPECT_TRUE(check_variant(pc, rmsnorm_backward_variant<BackwardDefect::none>(), nullptr).passed) << case_label(c);
    for (const Variant& broken : {rmsnorm_backward_variant<BackwardDefect::lost_dh>(),
                                  rmsnorm_backward_variant<BackwardDefect::skipped_row>(),
                                  rmsnorm_backward_variant<BackwardDefect::half_dw>()}) {
      EXPECT_FALSE(check_variant(pc, broken, nullptr).passed) << case_label(c) << ": a broken kernel passed";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3 * 3);
}

}  // namespace
}  // namespace kbench::rows
