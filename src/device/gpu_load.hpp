// GPU load, recorded before and after a run so that a result taken on a busy, hot or
// power-capped GPU says so. Read through NVML (device/nvml.hpp), the library nvidia-smi itself
// reads: the record keeps the fields and names it had when kbench parsed nvidia-smi's text, so
// results from then and now read alike. A machine without NVML still runs: the snapshot then
// says "available": false and why.
//
// The readings (GpuReadings) are mapped to the record by a pure function, so the CPU tests can
// feed it made-up readings.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

// A GPU busier than this (utilization, %) before a run gets a warning in the result.
inline constexpr double kBusyUtilizationPct = 10.0;

// What NVML said of one GPU, in its own units; absent where it could not say.
struct GpuReadings {
  std::optional<unsigned> utilization_pct, memory_utilization_pct;  // over NVML's last sample period
  std::optional<unsigned> sm_clock_mhz, mem_clock_mhz;
  std::optional<int> temperature_c;
  std::optional<unsigned> power_mw;
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<std::uint64_t> clock_event_reasons;  // nvmlClocksEventReason* bits
  std::string uuid;                                  // "GPU-..."; empty when unknown
  struct Process {
    std::int64_t pid = 0;
    std::string name;
    std::optional<std::uint64_t> used_bytes;
  };
  std::optional<std::vector<Process>> processes;  // absent: NVML could not list them (processes_error says why)
  std::string processes_error;
  std::string time;  // ISO-8601 UTC, when read
};

// The load record of one snapshot: {"available": true, "utilization_pct",
// "memory_utilization_pct", "sm_clock_mhz", "mem_clock_mhz", "temperature_c" (integers),
// "power_w" (watts), "memory_used_mib" (integer MiB), "clock_event_reasons" ({"hex", "names"}),
// "uuid", "processes" ([{"pid", "name", "used_mib"}], or null with "processes_error"), "time"};
// an absent reading is null.
nlohmann::json load_snapshot(const GpuReadings& r);

// 0x24 => {"hex": "0x0000000000000024", "names": ["sw_power_cap", "sw_thermal_slowdown"]}, bits
// no name is known for as "unknown_0x...".
nlohmann::json decode_clock_event_reasons(std::uint64_t bits);

// A snapshot of one GPU (its uuid "GPU-..." or NVML index): load_snapshot of NVML's readings, or
// {"available": false, "reason": "..."} when NVML cannot answer.
nlohmann::json query_gpu_load(const std::string& uuid_or_index);

// Warnings for a result file, from the snapshots taken before and after a run: a busy GPU
// (over 10% before), other processes on the GPU, clocks held down by power or heat, or no
// load readings at all. `own_pid` is this process, which is expected on the GPU.
std::vector<std::string> load_warnings(const nlohmann::json& before, const nlohmann::json& after,
                                       int own_pid);

}  // namespace kbench
