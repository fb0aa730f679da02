#include "device/gpu_load.hpp"

#include <array>
#include <cstdio>
#include <set>

#include "core/text.hpp"
#include "device/nvml.hpp"

namespace kbench {
namespace {

using nlohmann::json;

constexpr std::uint64_t kMiB = 1024 * 1024;

struct ReasonBit {
  std::uint64_t bit;
  const char* name;
};
// NVML's clock event reason bits (nvmlClocksEventReason*), named as nvidia-smi names them.
constexpr std::array<ReasonBit, 9> kReasonBits{{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};
// Reasons that mean the clock was held below what the load asked for.
const std::set<std::string> kLimitingReasons{"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown",
                                             "hw_thermal_slowdown", "hw_power_brake_slowdown"};

template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json mib_or_null(const std::optional<std::uint64_t>& bytes) {
  return bytes ? json(*bytes / kMiB) : json(nullptr);
}

json unavailable(const std::string& reason) { return {{"available", false}, {"reason", reason}}; }

bool is_available(const json& snapshot) {
  return snapshot.is_object() && snapshot.value("available", false);
}

}  // namespace

json decode_clock_event_reasons(std::uint64_t bits) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(bits));
  json names = json::array();
  std::uint64_t unknown = bits;
  for (const auto& r : kReasonBits) {
    if (bits & r.bit) names.push_back(r.name);
    unknown &= ~r.bit;
  }
  if (unknown) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "unknown_0x%llx", static_cast<unsigned long long>(unknown));
    names.push_back(buf);
  }
  return {{"hex", hex}, {"names", names}};
}

json load_snapshot(const GpuReadings& r) {
  json snapshot = {
      {"available", true},
      {"utilization_pct", or_null(r.utilization_pct)},
      {"memory_utilization_pct", or_null(r.memory_utilization_pct)},
      {"sm_clock_mhz", or_null(r.sm_clock_mhz)},
      {"mem_clock_mhz", or_null(r.mem_clock_mhz)},
      {"temperature_c", or_null(r.temperature_c)},
      {"power_w", r.power_mw ? json(*r.power_mw / 1000.0) : json(nullptr)},
      {"memory_used_mib", mib_or_null(r.memory_used_bytes)},
      {"clock_event_reasons", r.clock_event_reasons ? decode_clock_event_reasons(*r.clock_event_reasons) : json(nullptr)},
      {"uuid", r.uuid.rfind("GPU-", 0) == 0 ? json(r.uuid) : json(nullptr)},
      {"time", r.time},
  };
  if (r.processes) {
    json processes = json::array();
    for (const auto& p : *r.processes)
      processes.push_back({{"pid", p.pid}, {"name", p.name}, {"used_mib", mib_or_null(p.used_bytes)}});
    snapshot["processes"] = processes;
  } else {
    snapshot["processes"] = nullptr;
    snapshot["processes_error"] = r.processes_error;
  }
  return snapshot;
}

json query_gpu_load(const std::string& uuid_or_index) {
  const Nvml nvml;
  std::string why;
  const auto device = nvml.device(uuid_or_index, &why);
  if (!device) return unavailable(why);
  GpuReadings r;
  r.time = utc_now();
  if (const auto u = nvml.utilization(*device)) {
    r.utilization_pct = u->gpu_pct;
    r.memory_utilization_pct = u->memory_pct;
  }
  r.sm_clock_mhz = nvml.sm_clock_mhz(*device);
  r.mem_clock_mhz = nvml.mem_clock_mhz(*device);
  r.temperature_c = nvml.temperature_c(*device);
  r.power_mw = nvml.power_mw(*device);
  r.memory_used_bytes = nvml.memory_used_bytes(*device);
  r.clock_event_reasons = nvml.clock_event_reasons(*device);
  r.uuid = nvml.uuid(*device).value_or("");
  // The device's own processes: a job on a neighbouring GPU of the same host is not load on ours.
  if (const auto listed = nvml.compute_processes(*device, &r.processes_error)) {
    r.processes.emplace();
    for (const NvmlProcess& p : *listed)
      r.processes->push_back({p.pid, nvml.process_name(p.pid).value_or(""), p.used_bytes});
  }
  return load_snapshot(r);
}

std::vector<std::string> load_warnings(const json& before, const json& after, int own_pid) {
  std::vector<std::string> warnings;
  for (const auto* snapshot : {&before, &after}) {
    if (is_available(*snapshot)) continue;
    const std::string reason =
        snapshot->is_object() ? snapshot->value("reason", std::string("no snapshot")) : "no snapshot";
    warnings.push_back("GPU load not recorded (" + reason +
                       "): a busy or throttled GPU would go unnoticed");
    break;  // one such warning is enough
  }

  if (is_available(before) && before["utilization_pct"].is_number() &&
      before["utilization_pct"].get<double>() > kBusyUtilizationPct)
    warnings.push_back("GPU was " + before["utilization_pct"].dump() +
                       "% busy before the run: other work may have inflated the timings");

  std::set<std::int64_t> seen;
  std::string others;
  for (const auto* snapshot : {&before, &after}) {
    if (!is_available(*snapshot) || !(*snapshot)["processes"].is_array()) continue;
    for (const auto& p : (*snapshot)["processes"]) {
      const auto pid = p["pid"].get<std::int64_t>();
      if (pid == own_pid || !seen.insert(pid).second) continue;
      if (!others.empty()) others += ", ";
      others += "pid " + std::to_string(pid) + " (" + p["name"].get<std::string>() +
                (p["used_mib"].is_number() ? ", " + p["used_mib"].dump() + " MiB" : "") + ")";
    }
  }
  if (!others.empty()) warnings.push_back("other processes use this GPU: " + others);

  for (const auto& [snapshot, when] : {std::pair{&before, "before"}, std::pair{&after, "after"}}) {
    if (!is_available(*snapshot) || !(*snapshot)["clock_event_reasons"].is_object()) continue;
    std::string limits;
    for (const auto& name : (*snapshot)["clock_event_reasons"]["names"]) {
      if (!kLimitingReasons.count(name.get<std::string>())) continue;
      if (!limits.empty()) limits += ", ";
      limits += name.get<std::string>();
    }
    if (!limits.empty())
      warnings.push_back(std::string("clocks were held down ") + when + " the run by " + limits);
  }
  return warnings;
}

}  // namespace kbench
