// nvidia-smi parsing and the load warnings, fed with lines as nvidia-smi prints them.
#include <gtest/gtest.h>

#include "device/device_info.hpp"
#include "device/gpu_load.hpp"

namespace kbench {
namespace {

using nlohmann::json;

const char* kUuid = "GPU-3b2c1f0e-8a7d-4c6b-9e5f-0123456789ab";

// An idle H200 as `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` prints it.
const std::string kIdleLine =
    "0, 0, 1980, 3201, 31, 75.43, 1, 0x0000000000000001, GPU-3b2c1f0e-8a7d-4c6b-9e5f-0123456789ab";

json snapshot(const std::string& line, const std::string& apps = "") {
  json s = parse_gpu_query_line(line);
  s["available"] = true;
  s["processes"] = parse_compute_apps(apps, kUuid);
  return s;
}

TEST(GpuQueryLine, ParsesEveryField) {
  const json q = parse_gpu_query_line(kIdleLine);
  EXPECT_EQ(q["utilization_pct"], 0);
  EXPECT_EQ(q["memory_utilization_pct"], 0);
  EXPECT_EQ(q["sm_clock_mhz"], 1980);
  EXPECT_EQ(q["mem_clock_mhz"], 3201);
  EXPECT_EQ(q["temperature_c"], 31);
  EXPECT_DOUBLE_EQ(q["power_w"].get<double>(), 75.43);
  EXPECT_EQ(q["memory_used_mib"], 1);
  EXPECT_EQ(q["clock_event_reasons"]["hex"], "0x0000000000000001");
  EXPECT_EQ(q["clock_event_reasons"]["names"], json::array({"gpu_idle"}));
  EXPECT_EQ(q["uuid"], kUuid);
}

TEST(GpuQueryLine, NotAvailableFieldsBecomeNull) {
  const json q = parse_gpu_query_line(
      "[N/A], [N/A], 1755, 2619, 40, [N/A], 512, [Not Supported], GPU-3b2c1f0e-8a7d-4c6b-9e5f-0123456789ab");
  EXPECT_TRUE(q["utilization_pct"].is_null());
  EXPECT_TRUE(q["memory_utilization_pct"].is_null());
  EXPECT_TRUE(q["power_w"].is_null());
  EXPECT_TRUE(q["clock_event_reasons"].is_null());
  EXPECT_EQ(q["sm_clock_mhz"], 1755);
  EXPECT_EQ(q["memory_used_mib"], 512);
}

TEST(GpuQueryLine, WrongFieldCountThrows) {
  EXPECT_THROW(parse_gpu_query_line("0, 0, 1980"), std::invalid_argument);
  EXPECT_THROW(parse_gpu_query_line(""), std::invalid_argument);
}

TEST(ComputeApps, EmptyOutputHasNoProcesses) {
  EXPECT_EQ(parse_compute_apps("", kUuid), json::array());
  EXPECT_EQ(parse_compute_apps("\n", kUuid), json::array());
  EXPECT_EQ(parse_compute_apps("No running processes found\n", kUuid), json::array());
}

TEST(ComputeApps, TwoProcessesAndOneOnAnotherGpu) {
  const std::string text = std::string(kUuid) + ", 4242, /usr/bin/python3, 1024\n" + kUuid +
                           ", 777, ./build/kbench, [N/A]\n" +
                           "GPU-ffffffff-0000-0000-0000-000000000000, 99, other, 50\n";
  const json apps = parse_compute_apps(text, kUuid);
  ASSERT_EQ(apps.size(), 2u);
  EXPECT_EQ(apps[0]["pid"], 4242);
  EXPECT_EQ(apps[0]["name"], "/usr/bin/python3");
  EXPECT_EQ(apps[0]["used_mib"], 1024);
  EXPECT_EQ(apps[1]["pid"], 777);
  EXPECT_EQ(apps[1]["name"], "./build/kbench");
  EXPECT_TRUE(apps[1]["used_mib"].is_null());
  EXPECT_EQ(parse_compute_apps(text, "").size(), 3u);
}

TEST(ComputeApps, NameWithCommaIsKeptWhole) {
  const json apps = parse_compute_apps(std::string(kUuid) + ", 5, a,b, 7\n", kUuid);
  ASSERT_EQ(apps.size(), 1u);
  EXPECT_EQ(apps[0]["name"], "a,b");
  EXPECT_EQ(apps[0]["used_mib"], 7);
}

TEST(ClockEventReasons, DecodesDocumentedBits) {
  EXPECT_EQ(decode_clock_event_reasons("0x0000000000000001")["names"], json::array({"gpu_idle"}));
  EXPECT_EQ(decode_clock_event_reasons("0x0000000000000000")["names"], json::array());
  EXPECT_EQ(decode_clock_event_reasons("0x0000000000000020")["names"],
            json::array({"sw_thermal_slowdown"}));
  EXPECT_EQ(decode_clock_event_reasons("0x00000000000000FF")["names"],
            json::array({"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
                         "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
                         "hw_power_brake_slowdown"}));
  EXPECT_EQ(decode_clock_event_reasons("0x0000000000001004")["names"],
            json::array({"sw_power_cap", "unknown_0x1000"}));
  EXPECT_EQ(decode_clock_event_reasons("0x0000000000000044")["hex"], "0x0000000000000044");
}

TEST(ClockEventReasons, NonHexIsNull) {
  EXPECT_TRUE(decode_clock_event_reasons("[N/A]").is_null());
  EXPECT_TRUE(decode_clock_event_reasons("0x").is_null());
  EXPECT_TRUE(decode_clock_event_reasons("0x12zz").is_null());
}

TEST(LoadWarnings, QuietIdleGpuHasNone) {
  const std::string own = std::string(kUuid) + ", 777, kbench, 500\n";
  EXPECT_TRUE(load_warnings(snapshot(kIdleLine), snapshot(kIdleLine, own), 777).empty());
}

TEST(LoadWarnings, BusyBeforeTheRun) {
  const std::string busy =
      "35, 20, 1980, 3201, 55, 400.1, 30000, 0x0000000000000000, " + std::string(kUuid);
  const auto w = load_warnings(snapshot(busy), snapshot(kIdleLine), 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("35% busy"), std::string::npos) << w[0];
  // 10% is the threshold itself, not above it.
  const std::string ten = "10, 0, 1980, 3201, 31, 75, 1, 0x0000000000000000, " + std::string(kUuid);
  EXPECT_TRUE(load_warnings(snapshot(ten), snapshot(kIdleLine), 1).empty());
}

TEST(LoadWarnings, AnotherProcessOnTheGpu) {
  const std::string apps = std::string(kUuid) + ", 4242, /usr/bin/python3, 1024\n" + kUuid +
                           ", 777, kbench, 500\n";
  const auto w = load_warnings(snapshot(kIdleLine, apps), snapshot(kIdleLine, apps), 777);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("pid 4242 (/usr/bin/python3, 1024 MiB)"), std::string::npos) << w[0];
  EXPECT_EQ(w[0].find("777"), std::string::npos) << w[0];
}

TEST(LoadWarnings, ThermalAndPowerSlowdown) {
  const std::string hot =
      "100, 80, 1500, 3201, 88, 699.0, 30000, 0x0000000000000024, " + std::string(kUuid);
  const auto w = load_warnings(snapshot(kIdleLine), snapshot(hot), 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("after the run by sw_power_cap, sw_thermal_slowdown"), std::string::npos)
      << w[0];
}

TEST(LoadWarnings, NvidiaSmiUnavailable) {
  const json missing = {{"available", false}, {"reason", "nvidia-smi not found"}};
  const auto w = load_warnings(missing, missing, 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("nvidia-smi not found"), std::string::npos) << w[0];
}

TEST(DeviceFormat, UuidLikeNvidiaSmi) {
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
