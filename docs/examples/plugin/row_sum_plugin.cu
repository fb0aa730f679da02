// A kbench plugin (docs/plugins.md): one variant of kbench's row_sum op, y[r] = sum of row r,
// compiled outside kbench and loaded with `kbench run --plugin libkbench_row_sum_plugin.so`.
//
// warp_per_row: one warp per row; each lane adds every 32nd element of the row in float32 (so a
// warp's loads of one step are one contiguous stretch of the row), then the warp's 32 partial
// sums are added by shuffles and lane 0 writes the row's sum, rounded once to the dtype.
// Bytes: the op's own count, rows x (cols + 1) elements; kbench measures and records them.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>

#include "kbench_plugin.h"

namespace {

constexpr int kWarpsPerBlock = 8;
// A lane adds cols / 32 elements one after another in float32. For inputs |x| <= 1 of random
// sign the row sum's rounding error then has a standard deviation of about 0.04 cols u32
// (u32 = 2^-24), against the 16 sqrt(cols) u32 that row_sum allows (kernels/rows/
// row_sum_op.cpp): six standard deviations at 4096 columns, fewer beyond. Wider rows want
// shorter serial chains, as kbench's own variants have; supports() says so rather than claim them.
constexpr int64_t kMaxCols = 4096;

__device__ float to_float(float v) { return v; }
__device__ float to_float(__half v) { return __half2float(v); }
__device__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ T from_float(float v);
template <> __device__ float from_float<float>(float v) { return v; }
template <> __device__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <class T>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    row_sum_warp_per_row(const T* __restrict__ x, T* __restrict__ sum, int64_t rows, int64_t cols, int64_t x_stride,
                         int64_t sum_stride) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;  // a whole warp leaves together: the shuffles below see all 32 lanes
  const T* in = x + row * x_stride;
  float partial = 0.0f;
  for (int64_t c = lane; c < cols; c += 32) partial += to_float(in[c]);
  for (int offset = 16; offset > 0; offset /= 2) partial += __shfl_down_sync(0xffffffffu, partial, offset);
  if (lane == 0) sum[row * sum_stride] = from_float<T>(partial);
}

int supports(const kbench_plugin_case* problem, char* why, size_t why_size) {
  if (problem->rank != 2 || problem->shape[1] > kMaxCols) {
    snprintf(why, why_size, "rows of at most %lld columns", static_cast<long long>(kMaxCols));
    return 0;
  }
  return 1;
}

template <class T>
void launch_typed(const kbench_plugin_tensor& x, const kbench_plugin_tensor& sum, cudaStream_t stream) {
  const int64_t blocks = (x.rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  row_sum_warp_per_row<T><<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(
      static_cast<const T*>(x.data), static_cast<T*>(sum.data), x.rows, x.cols, x.row_stride, sum.row_stride);
}

int launch(const kbench_plugin_args* args, cudaStream_t stream) {
  if (args->input_count != 1 || args->output_count != 1) {
    snprintf(args->error, args->error_size, "row_sum has one input and one output, got %d and %d", args->input_count,
             args->output_count);
    return 1;
  }
  const kbench_plugin_tensor& x = args->inputs[0];
  const kbench_plugin_tensor& sum = args->outputs[0];
  if (x.rows == 0) return 0;
  if ((x.rows + kWarpsPerBlock - 1) / kWarpsPerBlock > 0x7fffffff) {
    snprintf(args->error, args->error_size, "%lld rows need more blocks than a grid holds", static_cast<long long>(x.rows));
    return 2;
  }
  switch (args->problem->dtype) {
    case KBENCH_PLUGIN_FLOAT32: launch_typed<float>(x, sum, stream); break;
    case KBENCH_PLUGIN_FLOAT16: launch_typed<__half>(x, sum, stream); break;
    case KBENCH_PLUGIN_BFLOAT16: launch_typed<__nv_bfloat16>(x, sum, stream); break;
    default: snprintf(args->error, args->error_size, "dtype %d", args->problem->dtype); return 3;
  }
  // kbench's CUDA runtime cannot see this library's launch errors: report them here.
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    snprintf(args->error, args->error_size, "kernel launch: %s", cudaGetErrorString(err));
    return 4;
  }
  return 0;
}

const int32_t kDtypes[] = {KBENCH_PLUGIN_FLOAT32, KBENCH_PLUGIN_FLOAT16, KBENCH_PLUGIN_BFLOAT16};

const kbench_plugin_variant kVariants[] = {
    {"row_sum", "warp_per_row", "one warp per row, lanes strided over the row, shuffle sum", kDtypes, 3, supports,
     nullptr, launch},
};

const kbench_plugin kPlugin = {KBENCH_PLUGIN_ABI_VERSION, "row_sum_example", kVariants, 1};

}  // namespace

extern "C" KBENCH_PLUGIN_EXPORT const kbench_plugin* kbench_plugin_entry(void) { return &kPlugin; }
