#include "device/device_info.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/errors.hpp"
#include "device/device_limits.hpp"
#include "device/kernel_image.hpp"
#include "device/nvml.hpp"

namespace kbench {
namespace {

int cublas_property(libraryPropertyType type) {
  int value = 0;
  if (cublasGetProperty(type, &value) != CUBLAS_STATUS_SUCCESS)
    throw CudaError("cublasGetProperty failed");
  return value;
}

// A GPU node the driver made (/dev/nvidia0, ...) or a GPU it lists under /proc: without
// either, CUDA could only fail, so it is not asked.
bool nvidia_gpu_present() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists("/dev/nvidia0", ec)) return true;
  const fs::path gpus = "/proc/driver/nvidia/gpus";
  return fs::is_directory(gpus, ec) && !fs::is_empty(gpus, ec);
}

}  // namespace

PlanDevice plan_device(int requested) {
  const std::string fallback = "the H200 default (kH200Limits, src/device/device_limits.hpp)";
  if (!nvidia_gpu_present()) return {kH200Limits, fallback + ": no GPU visible"};
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear the sticky error: nothing else runs, but leave CUDA clean
    return {kH200Limits, fallback + ": the driver shows a GPU but CUDA sees none"};
  }
  select_device(requested);
  cudaDeviceProp prop{};
  KB_CUDA(cudaGetDeviceProperties(&prop, requested));
  return {current_device_limits(), "GPU " + std::to_string(requested) + " (" + prop.name + ")"};
}

int select_device(int requested) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    throw UsageError("no CUDA device visible: this command needs a CUDA GPU");
  if (requested < 0 || requested >= count)
    throw UsageError("device " + std::to_string(requested) + " does not exist: " +
                     std::to_string(count) + " CUDA device(s) visible, numbered 0 to " +
                     std::to_string(count - 1));
  KB_CUDA(cudaSetDevice(requested));
  // Before any case is prepared: a GPU this build has no code for gets one line, not a launch
  // failure in the middle of a case.
  if (const std::string why = build_image_problem(requested); !why.empty()) throw UsageError(why);
  return requested;
}

std::string format_gpu_uuid(const unsigned char (&bytes)[16]) {
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
    out += hex;
  }
  return out;
}

std::string format_cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

nlohmann::json device_block(int device) {
  cudaDeviceProp prop{};
  KB_CUDA(cudaGetDeviceProperties(&prop, device));
  char pci_bus_id[32] = {};
  KB_CUDA(cudaDeviceGetPCIBusId(pci_bus_id, sizeof pci_bus_id, device));
  int driver = 0, runtime = 0;
  KB_CUDA(cudaDriverGetVersion(&driver));
  KB_CUDA(cudaRuntimeGetVersion(&runtime));

  unsigned char uuid_bytes[16];
  std::memcpy(uuid_bytes, prop.uuid.bytes, sizeof uuid_bytes);
  const std::string uuid = format_gpu_uuid(uuid_bytes);

  // CUDA 13 dropped clockRate and memoryClockRate from cudaDeviceProp; the attributes remain.
  nlohmann::json block = {
      {"name", prop.name},
      {"cc", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
      {"sms", prop.multiProcessorCount},
      {"l2_bytes", prop.l2CacheSize},
      {"memory_bytes", prop.totalGlobalMem},
      {"uuid", uuid},
      {"pci_bus_id", pci_bus_id},
      {"sm_clock_max_mhz", device_attribute(cudaDevAttrClockRate, device) / 1000},
      {"memory_clock_mhz", device_attribute(cudaDevAttrMemoryClockRate, device) / 1000},
      {"memory_bus_bits", prop.memoryBusWidth},
      {"driver", format_cuda_version(driver)},
      {"cuda_runtime", format_cuda_version(runtime)},
      {"cublas", std::to_string(cublas_property(MAJOR_VERSION)) + "." +
                     std::to_string(cublas_property(MINOR_VERSION)) + "." +
                     std::to_string(cublas_property(PATCH_LEVEL))},
  };
  // The kernel driver's own version (e.g. "580.65.06") is only known to NVML.
  if (const auto version = Nvml().driver_version(); version && !version->empty()) block["driver_version"] = *version;
  return block;
}

}  // namespace kbench
