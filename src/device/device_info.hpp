// Which GPU a run uses, and the description of it that goes into every result file.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "device/device_limits.hpp"

namespace kbench {

// Makes `requested` the current device and returns it. Throws UsageError when no CUDA device
// is visible, `requested` is not one of them, or this build has no code it can run
// (device/kernel_image.hpp).
int select_device(int requested);

// The limits a plan is made for, and where they came from (a line for the output).
struct PlanDevice {
  DeviceLimits limits;
  std::string source;
};

// For `kbench run --dry-run`: the limits of device `requested` when the NVIDIA driver shows a
// GPU, else kH200Limits. Whether there is a GPU is judged from /proc/driver/nvidia and /dev
// first, so that a machine without one makes no CUDA call at all (no error, no library load).
// UsageError when GPUs are visible and `requested` is not one of them, as for a real run.
PlanDevice plan_device(int requested);

// {"name", "cc", "sms", "l2_bytes", "memory_bytes", "uuid", "pci_bus_id", "sm_clock_max_mhz",
//  "memory_clock_mhz", "memory_bus_bits", "driver", "driver_version" (when NVML answers),
//  "cuda_runtime", "cublas"}.
nlohmann::json device_block(int device);

// The 16 bytes of a CUDA uuid as NVML and nvidia-smi print them: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string format_gpu_uuid(const unsigned char (&bytes)[16]);

// A CUDA version number as "major.minor": 13000 => "13.0", 12080 => "12.8".
std::string format_cuda_version(int version);

}  // namespace kbench
