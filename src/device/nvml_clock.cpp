#include "device/nvml_clock.hpp"

#include <dlfcn.h>

namespace kbench {
namespace {

// The few NVML entry points used, declared as nvml.h has them (its ABI is stable: the _v2
// names are what nvml.h's macros resolve to).
using NvmlReturn = int;  // NVML_SUCCESS = 0
using NvmlInit = NvmlReturn (*)();
using NvmlShutdown = NvmlReturn (*)();
using NvmlHandleByUuid = NvmlReturn (*)(const char*, void**);
using NvmlClockInfo = NvmlReturn (*)(void*, int, unsigned int*);
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

template <class F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

NvmlClock::NvmlClock(const std::string& uuid) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    why_ = "libnvidia-ml.so.1 could not be opened";
    return;
  }
  const auto init = symbol<NvmlInit>(library_, "nvmlInit_v2");
  const auto by_uuid = symbol<NvmlHandleByUuid>(library_, "nvmlDeviceGetHandleByUUID");
  get_clock_ = dlsym(library_, "nvmlDeviceGetClockInfo");
  if (!init || !by_uuid || !get_clock_) {
    why_ = "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetHandleByUUID or nvmlDeviceGetClockInfo";
  } else if (init() != 0) {
    why_ = "nvmlInit_v2 failed";
  } else if (by_uuid(uuid.c_str(), &device_) != 0) {
    why_ = "NVML does not know the device " + uuid;
    if (const auto shutdown = symbol<NvmlShutdown>(library_, "nvmlShutdown")) shutdown();
  } else {
    return;
  }
  dlclose(library_);
  library_ = nullptr;
}

NvmlClock::~NvmlClock() {
  if (!library_) return;
  if (const auto shutdown = symbol<NvmlShutdown>(library_, "nvmlShutdown")) shutdown();
  dlclose(library_);
}

std::optional<double> NvmlClock::sm_mhz() const {
  if (!library_) return std::nullopt;
  unsigned int mhz = 0;
  if (reinterpret_cast<NvmlClockInfo>(get_clock_)(device_, kNvmlClockSm, &mhz) != 0) return std::nullopt;
  return static_cast<double>(mhz);
}

}  // namespace kbench
