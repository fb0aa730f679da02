#include "kernels/common/grid.hpp"

#include <algorithm>

#include "device/device_limits.hpp"

namespace kbench {

unsigned grid_stride_blocks(std::int64_t work_items, int threads) {
  const DeviceLimits& dev = current_device_limits();
  const std::int64_t full = static_cast<std::int64_t>(dev.sms) * (dev.max_threads_per_sm / threads);
  const std::int64_t needed = (work_items + threads - 1) / threads;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(full, needed)));
}

}  // namespace kbench
