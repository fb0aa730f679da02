// The SM clock as NVML reports it, read fast enough to sit beside every probe sample. The rest
// of kbench reads load through nvidia-smi (device/gpu_load.hpp), but one nvidia-smi call costs
// tens of milliseconds and puts a process on the host between samples; NVML's own call costs
// microseconds. NVML is opened at run time (dlopen of the driver's libnvidia-ml.so.1), so there
// is nothing to link and a machine without it still runs: the reading is then absent.
#pragma once

#include <optional>
#include <string>

namespace kbench {

class NvmlClock {
 public:
  // `uuid`: the device's "GPU-..." uuid (device_info's). Never throws: unavailable() says why.
  explicit NvmlClock(const std::string& uuid);
  ~NvmlClock();
  NvmlClock(const NvmlClock&) = delete;
  NvmlClock& operator=(const NvmlClock&) = delete;

  // NVML's current SM clock in MHz, or nullopt when NVML is missing or the call fails.
  std::optional<double> sm_mhz() const;
  // Empty when readings are possible; else why not (for the result).
  const std::string& unavailable() const { return why_; }

 private:
  void* library_ = nullptr;
  void* device_ = nullptr;
  void* get_clock_ = nullptr;  // nvmlDeviceGetClockInfo
  std::string why_;
};

}  // namespace kbench
