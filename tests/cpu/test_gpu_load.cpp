// The load record from NVML's readings (made up here, as NVML reports them: its units, its
// absent values) and the load warnings; and NVML itself where it cannot answer.
#include <gtest/gtest.h>

#include "device/device_info.hpp"
#include "device/gpu_load.hpp"
#include "device/nvml.hpp"

namespace kbench {
namespace {

using nlohmann::json;

const char* kUuid = "GPU-3b2c1f0e-8a7d-4c6b-9e5f-0123456789ab";
constexpr std::uint64_t kMiB = 1024 * 1024;

// An idle H200 as NVML reports it.
GpuReadings idle() {
  GpuReadings r;
  r.utilization_pct = 0;
  r.memory_utilization_pct = 0;
  r.sm_clock_mhz = 1980;
  r.mem_clock_mhz = 3201;
  r.temperature_c = 31;
  r.power_mw = 75430;
  r.memory_used_bytes = 1 * kMiB + 4096;  // part of a MiB is not a MiB more
  r.clock_event_reasons = 0x1;
  r.uuid = kUuid;
  r.processes.emplace();
  r.time = "2026-12-01T08:16:30Z";
  return r;
}

GpuReadings with_processes(GpuReadings r, std::vector<GpuReadings::Process> processes) {
  r.processes = std::move(processes);
  return r;
}

// Every field of the record, under the names results have always had (docs/schema.md `load`).
TEST(LoadSnapshot, MapsEveryReadingToTheRecordsField) {
  const json q = load_snapshot(idle());
  EXPECT_EQ(q["available"], true);
  EXPECT_EQ(q["utilization_pct"], 0);
  EXPECT_EQ(q["memory_utilization_pct"], 0);
  EXPECT_EQ(q["sm_clock_mhz"], 1980);
  EXPECT_EQ(q["mem_clock_mhz"], 3201);
  EXPECT_EQ(q["temperature_c"], 31);
  EXPECT_DOUBLE_EQ(q["power_w"].get<double>(), 75.43);  // NVML's milliwatts
  EXPECT_EQ(q["memory_used_mib"], 1);                   // NVML's bytes
  EXPECT_EQ(q["clock_event_reasons"]["hex"], "0x0000000000000001");
  EXPECT_EQ(q["clock_event_reasons"]["names"], json::array({"gpu_idle"}));
  EXPECT_EQ(q["uuid"], kUuid);
  EXPECT_EQ(q["processes"], json::array());
  EXPECT_EQ(q["time"], "2026-12-01T08:16:30Z");
  EXPECT_FALSE(q.contains("processes_error"));
  // The same keys as a snapshot in a committed result (nvidia-smi's, before NVML), no more.
  const json committed = {{"available", true},     {"clock_event_reasons", nullptr}, {"mem_clock_mhz", 3201},
                          {"memory_used_mib", 527}, {"memory_utilization_pct", 0},    {"power_w", 88.8},
                          {"processes", json::array()}, {"sm_clock_mhz", 1980},     {"temperature_c", 38},
                          {"time", ""},             {"utilization_pct", 1},           {"uuid", kUuid}};
  std::vector<std::string> keys, committed_keys;
  for (const auto& [k, v] : q.items()) keys.push_back(k);
  for (const auto& [k, v] : committed.items()) committed_keys.push_back(k);
  EXPECT_EQ(keys, committed_keys);
}

TEST(LoadSnapshot, AbsentReadingsBecomeNull) {
  GpuReadings r;
  r.sm_clock_mhz = 1755;
  r.memory_used_bytes = 512 * kMiB;
  r.uuid = "not a uuid";
  const json q = load_snapshot(r);
  EXPECT_TRUE(q["utilization_pct"].is_null());
  EXPECT_TRUE(q["memory_utilization_pct"].is_null());
  EXPECT_TRUE(q["power_w"].is_null());
  EXPECT_TRUE(q["temperature_c"].is_null());
  EXPECT_TRUE(q["clock_event_reasons"].is_null());
  EXPECT_TRUE(q["uuid"].is_null());
  EXPECT_EQ(q["sm_clock_mhz"], 1755);
  EXPECT_EQ(q["memory_used_mib"], 512);
}

TEST(LoadSnapshot, ProcessesWithTheirMemoryOrNullAndAnUnlistableList) {
  const json q = load_snapshot(with_processes(idle(), {{4242, "/usr/bin/python3", 1024 * kMiB}, {777, "./build/kbench", std::nullopt}}));
  ASSERT_EQ(q["processes"].size(), 2u);
  EXPECT_EQ(q["processes"][0], (json{{"pid", 4242}, {"name", "/usr/bin/python3"}, {"used_mib", 1024}}));
  EXPECT_EQ(q["processes"][1]["pid"], 777);
  EXPECT_TRUE(q["processes"][1]["used_mib"].is_null());

  GpuReadings unlisted = idle();
  unlisted.processes.reset();
  unlisted.processes_error = "the compute process list failed: Not Supported";
  const json u = load_snapshot(unlisted);
  EXPECT_TRUE(u["processes"].is_null());
  EXPECT_EQ(u["processes_error"], "the compute process list failed: Not Supported");
}

TEST(ClockEventReasons, DecodesDocumentedBits) {
  EXPECT_EQ(decode_clock_event_reasons(0x1)["names"], json::array({"gpu_idle"}));
  EXPECT_EQ(decode_clock_event_reasons(0x0)["names"], json::array());
  EXPECT_EQ(decode_clock_event_reasons(0x0)["hex"], "0x0000000000000000");
  EXPECT_EQ(decode_clock_event_reasons(0x20)["names"], json::array({"sw_thermal_slowdown"}));
  EXPECT_EQ(decode_clock_event_reasons(0xFF)["names"],
            json::array({"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
                         "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
                         "hw_power_brake_slowdown"}));
  EXPECT_EQ(decode_clock_event_reasons(0x1004)["names"], json::array({"sw_power_cap", "unknown_0x1000"}));
  EXPECT_EQ(decode_clock_event_reasons(0x44)["hex"], "0x0000000000000044");
}

// A device NVML does not know, or no NVML at all (this CI machine has no driver): the snapshot
// says it is unavailable and why, and a run goes on.
TEST(GpuLoad, AGpuNvmlCannotReadIsUnavailableWithAReason) {
  const json q = query_gpu_load("GPU-00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(q["available"], false);
  ASSERT_TRUE(q["reason"].is_string());
  EXPECT_FALSE(q["reason"].get<std::string>().empty());
  const Nvml nvml;
  if (!nvml.unavailable().empty()) {
    EXPECT_EQ(q["reason"], nvml.unavailable());
    EXPECT_FALSE(nvml.driver_version());
  }
}

TEST(LoadWarnings, QuietIdleGpuHasNone) {
  const json own = load_snapshot(with_processes(idle(), {{777, "kbench", 500 * kMiB}}));
  EXPECT_TRUE(load_warnings(load_snapshot(idle()), own, 777).empty());
}

TEST(LoadWarnings, BusyBeforeTheRun) {
  GpuReadings busy = idle();
  busy.utilization_pct = 35;
  const auto w = load_warnings(load_snapshot(busy), load_snapshot(idle()), 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("35% busy"), std::string::npos) << w[0];
  // 10% is the threshold itself, not above it.
  GpuReadings ten = idle();
  ten.utilization_pct = 10;
  EXPECT_TRUE(load_warnings(load_snapshot(ten), load_snapshot(idle()), 1).empty());
}

TEST(LoadWarnings, AnotherProcessOnTheGpu) {
  const json both = load_snapshot(with_processes(idle(), {{4242, "/usr/bin/python3", 1024 * kMiB}, {777, "kbench", 500 * kMiB}}));
  const auto w = load_warnings(both, both, 777);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("pid 4242 (/usr/bin/python3, 1024 MiB)"), std::string::npos) << w[0];
  EXPECT_EQ(w[0].find("777"), std::string::npos) << w[0];
}

TEST(LoadWarnings, ThermalAndPowerSlowdown) {
  GpuReadings hot = idle();
  hot.utilization_pct = 100;
  hot.clock_event_reasons = 0x24;
  const auto w = load_warnings(load_snapshot(idle()), load_snapshot(hot), 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("after the run by sw_power_cap, sw_thermal_slowdown"), std::string::npos) << w[0];
}

TEST(LoadWarnings, NoReadings) {
  const json missing = {{"available", false}, {"reason", "libnvidia-ml.so.1 could not be opened"}};
  const auto w = load_warnings(missing, missing, 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("libnvidia-ml.so.1 could not be opened"), std::string::npos) << w[0];
}

TEST(DeviceFormat, UuidLikeNvml) {
  const unsigned char bytes[16] = {0x3b, 0x2c, 0x1f, 0x0e, 0x8a, 0x7d, 0x4c, 0x6b,
                                   0x9e, 0x5f, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab};
  EXPECT_EQ(format_gpu_uuid(bytes), kUuid);
}

TEST(DeviceFormat, CudaVersion) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12080), "12.8");
}

}  // namespace
}  // namespace kbench
