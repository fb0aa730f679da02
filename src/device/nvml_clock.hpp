// The SM clock as NVML reports it, read fast enough to sit beside every probe sample: NVML's
// call costs microseconds, where a program such as nvidia-smi costs tens of milliseconds and puts
// a process on the host between samples. Read through kbench's one NVML loader
// (device/nvml.hpp): a machine without NVML still runs, the reading is then absent.
#pragma once

#include <optional>
#include <string>

#include "device/nvml.hpp"

namespace kbench {

class NvmlClock {
 public:
  // `uuid`: the device's "GPU-..." uuid (device_info's). Never throws: unavailable() says why.
  explicit NvmlClock(const std::string& uuid);

  // NVML's current SM clock in MHz, or nullopt when NVML is missing or the call fails.
  std::optional<double> sm_mhz() const;
  // Empty when readings are possible; else why not (for the result).
  const std::string& unavailable() const { return why_; }

 private:
  Nvml nvml_;
  std::string why_;  // before device_, which its constructor fills it beside
  std::optional<Nvml::Device> device_;
};

}  // namespace kbench
