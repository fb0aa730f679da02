// Negative controls for the row ops' oracle check: kernels broken on purpose, written here and
// compiled only into the test binary (the kernels kbench times carry no fault switch). Each is
// a plain block-per-row kernel with one defect the predecessor or this project once had:
//   - a row_sum or softmax that drops the row's last chunk (neither counted nor written);
//   - a softmax_backward that loses one warp's part of dot(y, dy).
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
                              {"softmax_backward", {8, 32769}}};
  int checked = 0;
  for (const Control& control : controls)
    for (DType dt : kAllDTypes) {
      const Case c{control.op, dt, control.shape, 0};
      Rng rng(5);
      const PreparedCase pc = prepare_case(registry().op(control.op), c, rng);
      EXPECT_FALSE(check_variant(pc, variant_of<true>(control.op), nullptr).passed)
          << case_label(c) << ": the broken kernel passed";
      const CheckInfo intact = check_variant(pc, variant_of<false>(control.op), nullptr);
      EXPECT_TRUE(intact.passed) << case_label(c) << ": " << intact.detail;
      ++checked;
    }
  EXPECT_EQ(checked, 7 * 3);
}

}  // namespace
}  // namespace kbench::rows
