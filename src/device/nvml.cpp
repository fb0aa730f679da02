#include "device/nvml.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace kbench {
namespace {

// nvml.h's types and constants, as far as they are used (nvml.h, NVML API version 13).
using Return = int;                 // nvmlReturn_t
constexpr Return kSuccess = 0;      // NVML_SUCCESS
constexpr Return kInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
constexpr int kClockSm = 1, kClockMem = 2;  // NVML_CLOCK_SM, NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE as unsigned long long
constexpr unsigned kUuidBuffer = 96;    // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kVersionBuffer = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr unsigned kNameBuffer = 256;

struct UtilizationT {  // nvmlUtilization_t
  unsigned gpu, memory;
};
struct MemoryV1 {  // nvmlMemory_t
  unsigned long long total, free, used;
};
struct MemoryV2 {  // nvmlMemory_v2_t
  unsigned version;
  unsigned long long total, reserved, free, used;
};
struct TemperatureV1 {  // nvmlTemperature_v1_t
  unsigned version;
  int sensor;
  int temperature;
};
struct ProcessInfoV2 {  // nvmlProcessInfo_v2_t, what _v2 and _v3 of the process query fill
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};
// NVML_STRUCT_VERSION(data, ver): the struct's size with its version in the top byte.
template <class T>
constexpr unsigned struct_version(unsigned v) {
  return static_cast<unsigned>(sizeof(T)) | (v << 24U);
}

template <class F>
F resolve(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

struct Nvml::Api {
  Return (*init)() = nullptr;                                  // nvmlInit_v2
  Return (*shutdown)() = nullptr;                              // nvmlShutdown
  const char* (*error_string)(Return) = nullptr;               // nvmlErrorString
  Return (*by_uuid)(const char*, Device*) = nullptr;           // nvmlDeviceGetHandleByUUID
  Return (*by_index)(unsigned, Device*) = nullptr;             // nvmlDeviceGetHandleByIndex_v2
  Return (*clock_info)(Device, int, unsigned*) = nullptr;      // nvmlDeviceGetClockInfo
  Return (*utilization)(Device, UtilizationT*) = nullptr;      // nvmlDeviceGetUtilizationRates
  Return (*temperature_v)(Device, TemperatureV1*) = nullptr;   // nvmlDeviceGetTemperatureV
  Return (*temperature)(Device, int, unsigned*) = nullptr;     // nvmlDeviceGetTemperature (deprecated in 13)
  Return (*power)(Device, unsigned*) = nullptr;                // nvmlDeviceGetPowerUsage (milliwatts)
  Return (*memory_v2)(Device, MemoryV2*) = nullptr;            // nvmlDeviceGetMemoryInfo_v2
  Return (*memory)(Device, MemoryV1*) = nullptr;               // nvmlDeviceGetMemoryInfo
  Return (*event_reasons)(Device, unsigned long long*) = nullptr;  // nvmlDeviceGetCurrentClocksEventReasons
  Return (*throttle_reasons)(Device, unsigned long long*) = nullptr;  // its older name
  Return (*uuid)(Device, char*, unsigned) = nullptr;           // nvmlDeviceGetUUID
  Return (*processes)(Device, unsigned*, ProcessInfoV2*) = nullptr;  // nvmlDeviceGetComputeRunningProcesses_v3 or _v2
  Return (*process_name)(unsigned, char*, unsigned) = nullptr;  // nvmlSystemGetProcessName
  Return (*driver_version)(char*, unsigned) = nullptr;         // nvmlSystemGetDriverVersion
};

Nvml::Nvml() {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    why_ = "libnvidia-ml.so.1 could not be opened (no NVIDIA driver here)";
    return;
  }
  auto api = std::make_unique<Api>();
  void* const l = library_;
  api->init = resolve<decltype(api->init)>(l, "nvmlInit_v2");
  api->shutdown = resolve<decltype(api->shutdown)>(l, "nvmlShutdown");
  api->error_string = resolve<decltype(api->error_string)>(l, "nvmlErrorString");
  api->by_uuid = resolve<decltype(api->by_uuid)>(l, "nvmlDeviceGetHandleByUUID");
  api->by_index = resolve<decltype(api->by_index)>(l, "nvmlDeviceGetHandleByIndex_v2");
  api->clock_info = resolve<decltype(api->clock_info)>(l, "nvmlDeviceGetClockInfo");
  api->utilization = resolve<decltype(api->utilization)>(l, "nvmlDeviceGetUtilizationRates");
  api->temperature_v = resolve<decltype(api->temperature_v)>(l, "nvmlDeviceGetTemperatureV");
  api->temperature = resolve<decltype(api->temperature)>(l, "nvmlDeviceGetTemperature");
  api->power = resolve<decltype(api->power)>(l, "nvmlDeviceGetPowerUsage");
  api->memory_v2 = resolve<decltype(api->memory_v2)>(l, "nvmlDeviceGetMemoryInfo_v2");
  api->memory = resolve<decltype(api->memory)>(l, "nvmlDeviceGetMemoryInfo");
  api->event_reasons = resolve<decltype(api->event_reasons)>(l, "nvmlDeviceGetCurrentClocksEventReasons");
  api->throttle_reasons = resolve<decltype(api->throttle_reasons)>(l, "nvmlDeviceGetCurrentClocksThrottleReasons");
  api->uuid = resolve<decltype(api->uuid)>(l, "nvmlDeviceGetUUID");
  api->processes = resolve<decltype(api->processes)>(l, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!api->processes) api->processes = resolve<decltype(api->processes)>(l, "nvmlDeviceGetComputeRunningProcesses_v2");
  api->process_name = resolve<decltype(api->process_name)>(l, "nvmlSystemGetProcessName");
  api->driver_version = resolve<decltype(api->driver_version)>(l, "nvmlSystemGetDriverVersion");
  if (!api->init || !api->shutdown || !api->by_uuid) {
    why_ = "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByUUID";
  } else if (const Return status = api->init(); status != kSuccess) {
    api_ = std::move(api);  // for error()'s text
    why_ = "nvmlInit_v2 failed: " + error(status);
    api_.reset();
  } else {
    api_ = std::move(api);
    return;
  }
  dlclose(library_);
  library_ = nullptr;
}

Nvml::~Nvml() {
  if (!api_) return;
  api_->shutdown();
  dlclose(library_);
}

std::string Nvml::error(int status) const {
  if (api_ && api_->error_string)
    if (const char* text = api_->error_string(status)) return text;
  return "NVML error " + std::to_string(status);
}

std::optional<Nvml::Device> Nvml::device(const std::string& uuid_or_index, std::string* why) const {
  const auto fail = [&](const std::string& reason) -> std::optional<Device> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (!api_) return fail(why_);
  Device d = nullptr;
  Return status = 0;
  char* end = nullptr;
  const unsigned long index = std::strtoul(uuid_or_index.c_str(), &end, 10);
  if (!uuid_or_index.empty() && end == uuid_or_index.c_str() + uuid_or_index.size()) {
    if (!api_->by_index) return fail("libnvidia-ml.so.1 lacks nvmlDeviceGetHandleByIndex_v2");
    status = api_->by_index(static_cast<unsigned>(index), &d);
  } else {
    status = api_->by_uuid(uuid_or_index.c_str(), &d);
  }
  if (status != kSuccess) return fail("NVML does not know the device " + uuid_or_index + ": " + error(status));
  return d;
}

std::optional<unsigned> Nvml::sm_clock_mhz(Device d) const {
  unsigned mhz = 0;
  if (!api_ || !api_->clock_info || api_->clock_info(d, kClockSm, &mhz) != kSuccess) return std::nullopt;
  return mhz;
}

std::optional<unsigned> Nvml::mem_clock_mhz(Device d) const {
  unsigned mhz = 0;
  if (!api_ || !api_->clock_info || api_->clock_info(d, kClockMem, &mhz) != kSuccess) return std::nullopt;
  return mhz;
}

std::optional<Nvml::Utilization> Nvml::utilization(Device d) const {
  UtilizationT u{};
  if (!api_ || !api_->utilization || api_->utilization(d, &u) != kSuccess) return std::nullopt;
  return Utilization{u.gpu, u.memory};
}

std::optional<int> Nvml::temperature_c(Device d) const {
  if (!api_) return std::nullopt;
  if (api_->temperature_v) {
    TemperatureV1 t{struct_version<TemperatureV1>(1), kTemperatureGpu, 0};
    if (api_->temperature_v(d, &t) == kSuccess) return t.temperature;
  }
  unsigned c = 0;
  if (api_->temperature && api_->temperature(d, kTemperatureGpu, &c) == kSuccess) return static_cast<int>(c);
  return std::nullopt;
}

std::optional<unsigned> Nvml::power_mw(Device d) const {
  unsigned mw = 0;
  if (!api_ || !api_->power || api_->power(d, &mw) != kSuccess) return std::nullopt;
  return mw;
}

std::optional<std::uint64_t> Nvml::memory_used_bytes(Device d) const {
  if (!api_) return std::nullopt;
  if (api_->memory_v2) {
    MemoryV2 m{};
    m.version = struct_version<MemoryV2>(2);
    if (api_->memory_v2(d, &m) == kSuccess) return m.used;
  }
  MemoryV1 m{};
  if (api_->memory && api_->memory(d, &m) == kSuccess) return m.used;
  return std::nullopt;
}

std::optional<std::uint64_t> Nvml::clock_event_reasons(Device d) const {
  if (!api_) return std::nullopt;
  unsigned long long bits = 0;
  const auto call = api_->event_reasons ? api_->event_reasons : api_->throttle_reasons;
  if (!call || call(d, &bits) != kSuccess) return std::nullopt;
  return bits;
}

std::optional<std::string> Nvml::uuid(Device d) const {
  char text[kUuidBuffer] = {};
  if (!api_ || !api_->uuid || api_->uuid(d, text, sizeof text) != kSuccess) return std::nullopt;
  return std::string(text);
}

std::optional<std::vector<NvmlProcess>> Nvml::compute_processes(Device d, std::string* why) const {
  const auto fail = [&](const std::string& reason) -> std::optional<std::vector<NvmlProcess>> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (!api_) return fail(why_);
  if (!api_->processes) return fail("libnvidia-ml.so.1 lacks nvmlDeviceGetComputeRunningProcesses_v3 and _v2");
  // Ask for the count, then the list with room for a few that start in between; a list that
  // outgrew even that is asked again.
  std::vector<ProcessInfoV2> infos;
  for (int attempt = 0; attempt < 3; ++attempt) {
    unsigned count = static_cast<unsigned>(infos.size());
    const Return status = api_->processes(d, &count, infos.empty() ? nullptr : infos.data());
    if (status == kSuccess) {
      infos.resize(count);
      std::vector<NvmlProcess> out;
      for (const ProcessInfoV2& p : infos) {
        NvmlProcess np;
        np.pid = p.pid;
        if (p.used_gpu_memory != kValueNotAvailable) np.used_bytes = p.used_gpu_memory;
        out.push_back(np);
      }
      return out;
    }
    if (status != kInsufficientSize) return fail("the compute process list failed: " + error(status));
    infos.assign(count + 8, ProcessInfoV2{});
  }
  return fail("the compute process list kept growing while it was read");
}

std::optional<std::string> Nvml::process_name(std::uint32_t pid) const {
  char name[kNameBuffer] = {};
  if (!api_ || !api_->process_name || api_->process_name(pid, name, sizeof name) != kSuccess) return std::nullopt;
  return std::string(name);
}

std::optional<std::string> Nvml::driver_version() const {
  char text[kVersionBuffer] = {};
  if (!api_ || !api_->driver_version || api_->driver_version(text, sizeof text) != kSuccess) return std::nullopt;
  return std::string(text);
}

}  // namespace kbench
