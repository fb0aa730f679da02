#include "kernels/common/grid.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>

#include "core/errors.hpp"

namespace kbench {

int current_device_sms() {
  static std::array<int, 64> cache{};  // 0 = not read yet
  int dev = 0;
  KB_CUDA(cudaGetDevice(&dev));
  if (dev < 0 || dev >= static_cast<int>(cache.size())) dev = 0;
  if (cache[dev] == 0) KB_CUDA(cudaDeviceGetAttribute(&cache[dev], cudaDevAttrMultiProcessorCount, dev));
  return cache[dev];
}

unsigned grid_stride_blocks(std::int64_t work_items, int threads) {
  const std::int64_t full = static_cast<std::int64_t>(current_device_sms()) * (2048 / threads);
  const std::int64_t needed = (work_items + threads - 1) / threads;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(full, needed)));
}

}  // namespace kbench
