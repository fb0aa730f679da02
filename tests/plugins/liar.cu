// A test plugin that claims more shapes than it computes (tests/gpu/test_plugins.cpp). Its
// supports() claims every row_sum case up to 2^20 columns in float32; its kernel, one warp per
// row with one element per lane per step, is right only for widths that are a multiple of 32
// up to 1024:
//   - wider rows: the launcher returns an error (the case's check fails on the error);
//   - a width that is not a multiple of 32: the last partial step is skipped, a dropped tail
//     the oracle check catches;
//   - a multiple of 32 up to 1024: a right answer, so kbench times it there like any variant.
#include <cuda_runtime.h>

#include <cstdio>

#include "kbench_plugin.h"

namespace {

constexpr int kWarpsPerBlock = 8;

__global__ void row_sum_full_steps_only(const float* x, float* sum, int64_t rows, int64_t cols, int64_t x_stride,
                                        int64_t sum_stride) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  float partial = 0.0f;
  for (int64_t c = 0; c + 32 <= cols; c += 32) partial += x[row * x_stride + c + lane];  // the lie: no tail
  for (int offset = 16; offset > 0; offset /= 2) partial += __shfl_down_sync(0xffffffffu, partial, offset);
  if (lane == 0) sum[row * sum_stride] = partial;
}

int claims_everything(const kbench_plugin_case* problem, char* why, size_t why_size) {
  if (problem->shape[1] > (int64_t{1} << 20)) {
    snprintf(why, why_size, "at most 2^20 columns");
    return 0;
  }
  return 1;
}

int launch(const kbench_plugin_args* args, cudaStream_t stream) {
  const kbench_plugin_tensor& x = args->inputs[0];
  const kbench_plugin_tensor& sum = args->outputs[0];
  if (x.cols > 1024) {
    snprintf(args->error, args->error_size, "rows wider than 1024 are beyond this kernel (got %lld)",
             static_cast<long long>(x.cols));
    return 22;
  }
  if (x.rows == 0) return 0;
  const int64_t blocks = (x.rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  row_sum_full_steps_only<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(
      static_cast<const float*>(x.data), static_cast<float*>(sum.data), x.rows, x.cols, x.row_stride, sum.row_stride);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    snprintf(args->error, args->error_size, "kernel launch: %s", cudaGetErrorString(err));
    return 1;
  }
  return 0;
}

const int32_t kDtypes[] = {KBENCH_PLUGIN_FLOAT32};
const kbench_plugin_variant kVariants[] = {
    {"row_sum", "liar", "claims widths to 2^20, computes multiples of 32 up to 1024", kDtypes, 1, claims_everything,
     nullptr, launch},
};
const kbench_plugin kPlugin = {KBENCH_PLUGIN_ABI_VERSION, "liar", kVariants, 1};

}  // namespace

extern "C" KBENCH_PLUGIN_EXPORT const kbench_plugin* kbench_plugin_entry(void) { return &kPlugin; }
