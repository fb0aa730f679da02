// What launch plans need to know of a device. DeviceLimits is plain data, so that the CPU tests
// can pin a plan on a made-up device; current_device_limits() reads the real one, once.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kbench {

struct DeviceLimits {
  int sms = 132;
  int max_threads_per_sm = 2048;
  std::int64_t l2_bytes = 50 << 20;
  std::int64_t max_grid_x = 2147483647;
  int max_grid_y = 65535;
};

// The limits a plan assumes where no GPU can be asked (`kbench run --dry-run` on a machine
// without one): the NVIDIA H200's, the GPU kbench is tuned and its results measured on (132
// SMs, 2048 threads per SM, 50 MiB of L2, CUDA's grid limits). The one named default: CPU tests
// that pin a plan on an H200 use it too.
inline constexpr DeviceLimits kH200Limits{132, 2048, std::int64_t{50} << 20, 2147483647, 65535};

// One attribute of a device (the current one when device < 0); throws CudaError on failure.
int device_attribute(cudaDeviceAttr attr, int device = -1);

// The current device's limits, read once per device and kept: launchers ask on every launch.
const DeviceLimits& current_device_limits();

}  // namespace kbench
