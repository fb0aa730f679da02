// NVML, the library nvidia-smi itself reads, and kbench's one way to it: the load record
// (device/gpu_load.hpp), the probe's per-sample SM clock (device/nvml_clock.hpp) and the driver
// version (device/device_info.hpp) all read through this class.
//
// Opened at run time (dlopen of the driver's libnvidia-ml.so.1), so there is nothing to link and
// a machine without a driver still runs: an Nvml then says why it is unavailable and every
// reading is absent. The entry points are declared here as nvml.h has them (its ABI is stable:
// the versioned names are what nvml.h's macros resolve to), so the build needs no nvml.h either
// (the CUDA Toolkit ships it only with its NVML development package).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

// One process with a compute context on a GPU, as NVML lists it.
struct NvmlProcess {
  std::uint32_t pid = 0;
  std::optional<std::uint64_t> used_bytes;  // absent where NVML cannot say (NVML_VALUE_NOT_AVAILABLE)
};

class Nvml {
 public:
  using Device = void*;  // nvmlDevice_t

  // Opens and initialises NVML (nvmlInit_v2; NVML counts its initialisations, so several Nvml
  // objects may live at once). Never throws: unavailable() says why not.
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // Empty when NVML answers; else why not (for a result's load record).
  const std::string& unavailable() const { return why_; }

  // A device by its uuid ("GPU-..." as device_info records it) or NVML index ("0"; NVML's indices
  // ignore CUDA_VISIBLE_DEVICES, so the runner passes the uuid). nullopt, with `why`, when NVML
  // does not know it.
  std::optional<Device> device(const std::string& uuid_or_index, std::string* why = nullptr) const;

  // The readings; nullopt when NVML is unavailable or the call fails (a feature the GPU lacks).
  std::optional<unsigned> sm_clock_mhz(Device d) const;
  std::optional<unsigned> mem_clock_mhz(Device d) const;
  struct Utilization {
    unsigned gpu_pct = 0, memory_pct = 0;
  };
  std::optional<Utilization> utilization(Device d) const;
  std::optional<int> temperature_c(Device d) const;
  std::optional<unsigned> power_mw(Device d) const;
  // Allocated device memory, without what the driver reserves (nvmlDeviceGetMemoryInfo_v2: the
  // figure nvidia-smi shows as memory.used); NVML's older call, which counts the reserve too,
  // where the driver lacks it.
  std::optional<std::uint64_t> memory_used_bytes(Device d) const;
  // The active clock event (throttle) reasons, nvmlClocksEventReason* bits.
  std::optional<std::uint64_t> clock_event_reasons(Device d) const;
  std::optional<std::string> uuid(Device d) const;
  // The processes with a compute context on the device; nullopt, with `why`, when NVML cannot
  // list them.
  std::optional<std::vector<NvmlProcess>> compute_processes(Device d, std::string* why = nullptr) const;
  std::optional<std::string> process_name(std::uint32_t pid) const;
  // The kernel driver's version ("580.65.06").
  std::optional<std::string> driver_version() const;

 private:
  struct Api;  // the entry points, resolved once when opened (nvml.cpp)
  std::string error(int status) const;  // nvmlErrorString's text, or the number

  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  std::string why_;
};

}  // namespace kbench
