// A test plugin that computes wrong results on every case it claims (tests/gpu/test_plugins.cpp):
// its row sums leave out the last column, a dropped element the oracle check must catch, so
// that kbench never times it while the other variants run and are timed.
#include <cuda_runtime.h>

#include <cstdio>

#include "kbench_plugin.h"

namespace {

__global__ void row_sum_but_last(const float* x, float* sum, int64_t rows, int64_t cols, int64_t x_stride,
                                 int64_t sum_stride) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float total = 0.0f;
  for (int64_t c = 0; c + 1 < cols; ++c) total += x[row * x_stride + c];  // the bug: stops one short
  sum[row * sum_stride] = total;
}

int launch(const kbench_plugin_args* args, cudaStream_t stream) {
  const kbench_plugin_tensor& x = args->inputs[0];
  const kbench_plugin_tensor& sum = args->outputs[0];
  if (x.rows == 0) return 0;
  const int threads = 128;
  row_sum_but_last<<<static_cast<unsigned>((x.rows + threads - 1) / threads), threads, 0, stream>>>(
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
    {"row_sum", "drops_last_column", "a thread per row that stops one column short", kDtypes, 1, nullptr, nullptr,
     launch},
};
const kbench_plugin kPlugin = {KBENCH_PLUGIN_ABI_VERSION, "wrong", kVariants, 1};

}  // namespace

extern "C" KBENCH_PLUGIN_EXPORT const kbench_plugin* kbench_plugin_entry(void) { return &kPlugin; }
