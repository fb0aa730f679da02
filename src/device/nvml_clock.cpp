#include "device/nvml_clock.hpp"

namespace kbench {

NvmlClock::NvmlClock(const std::string& uuid) : device_(nvml_.device(uuid, &why_)) {}

std::optional<double> NvmlClock::sm_mhz() const {
  if (!device_) return std::nullopt;
  const auto mhz = nvml_.sm_clock_mhz(*device_);
  if (!mhz) return std::nullopt;
  return static_cast<double>(*mhz);
}

}  // namespace kbench
