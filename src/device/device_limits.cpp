#include "device/device_limits.hpp"

#include <array>
#include <atomic>
#include <string>

#include "core/errors.hpp"

namespace kbench {

int device_attribute(cudaDeviceAttr attr, int device) {
  if (device < 0) KB_CUDA(cudaGetDevice(&device));
  int value = 0;
  KB_CUDA(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

const DeviceLimits& current_device_limits() {
  // A fixed table per device index rather than a map, so that readers need no lock; two
  // threads that both miss write the same values.
  static std::array<DeviceLimits, 64> cache{};
  static std::array<std::atomic<bool>, 64> known{};
  int device = 0;
  KB_CUDA(cudaGetDevice(&device));
  if (device < 0 || device >= static_cast<int>(cache.size()))
    throw CudaError("device index " + std::to_string(device) + " is beyond kbench's table of 64");
  if (!known[device].load(std::memory_order_acquire)) {
    DeviceLimits d;
    d.sms = device_attribute(cudaDevAttrMultiProcessorCount, device);
    d.max_threads_per_sm = device_attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device);
    d.l2_bytes = device_attribute(cudaDevAttrL2CacheSize, device);
    d.max_grid_x = device_attribute(cudaDevAttrMaxGridDimX, device);
    d.max_grid_y = device_attribute(cudaDevAttrMaxGridDimY, device);
    cache[device] = d;
    known[device].store(true, std::memory_order_release);
  }
  return cache[device];
}

}  // namespace kbench
