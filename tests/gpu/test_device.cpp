// Device selection, the device block and the in-kernel clock, on a real GPU.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "device/clock.hpp"
#include "device/device_info.hpp"
#include "device/gpu_load.hpp"
#include "device/kernel_image.hpp"
#include "device/nvml_clock.hpp"
#include "device/warmup.hpp"
#include "foreign_arch/foreign_arch_kernel.hpp"
#include "gpu_test.hpp"

namespace kbench {
namespace {

TEST(Device, SelectsDeviceZeroAndRejectsOutOfRange) {
  KB_REQUIRE_GPU();
  EXPECT_EQ(select_device(0), 0);
  int count = 0;
  KB_CUDA(cudaGetDeviceCount(&count));
  EXPECT_THROW(select_device(count), UsageError);
  EXPECT_THROW(select_device(-1), UsageError);
}

// The build's own kernels load on the GPU the tests run on (the check select_device makes)...
TEST(Device, BuildHasCodeForThisGpu) {
  KB_REQUIRE_GPU();
  select_device(0);
  EXPECT_EQ(build_image_problem(0), "");
}

// ...and a kernel with code for another major version only is named, with the rebuild to do.
TEST(Device, KernelWithoutCodeForThisGpuIsRefused) {
  KB_REQUIRE_GPU();
  select_device(0);
  cudaDeviceProp prop{};
  KB_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (prop.major == test::kForeignArchMajor) GTEST_SKIP() << "the control's own major version";
  const std::string why = kernel_image_problem(test::foreign_arch_kernel(), 0);
  EXPECT_NE(why.find("cannot run this kbench"), std::string::npos) << why;
  EXPECT_NE(why.find("-DCMAKE_CUDA_ARCHITECTURES="), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_EQ(build_image_problem(0), "") << "the refusal left the runtime unusable";
}

TEST(Device, BlockDescribesTheGpu) {
  KB_REQUIRE_GPU();
  const auto block = device_block(select_device(0));
  EXPECT_GT(block["sms"].get<int>(), 0);
  EXPECT_GT(block["l2_bytes"].get<long long>(), 0);
  EXPECT_GT(block["memory_bytes"].get<long long>(), 0);
  EXPECT_EQ(block["uuid"].get<std::string>().rfind("GPU-", 0), 0u);
  EXPECT_EQ(block["uuid"].get<std::string>().size(), 40u);
  EXPECT_FALSE(block["cublas"].get<std::string>().empty());
}

TEST(Device, MeasuredSmClockIsPlausible) {
  KB_REQUIRE_GPU();
  select_device(0);
  const double mhz = measure_sm_clock_mhz(nullptr);
  EXPECT_GT(mhz, 100.0);
  EXPECT_LT(mhz, 5000.0);
}

TEST(Device, BusyKernelRunsForRoughlyItsTime) {
  KB_REQUIRE_GPU();
  select_device(0);
  int sms = 0;
  KB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  launch_busy(nullptr, sms, 1.0);  // module load (lazy loading) stays out of the timing
  KB_CUDA(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  KB_CUDA(cudaEventCreate(&start));
  KB_CUDA(cudaEventCreate(&stop));
  KB_CUDA(cudaEventRecord(start, nullptr));
  launch_busy(nullptr, sms, 20.0);
  KB_CUDA(cudaEventRecord(stop, nullptr));
  KB_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  KB_CUDA(cudaEventElapsedTime(&ms, start, stop));
  KB_CUDA(cudaEventDestroy(start));
  KB_CUDA(cudaEventDestroy(stop));
  EXPECT_GT(ms, 19.0f);
  if (!test::under_sanitizer()) {  // instrumented, the launch itself takes longer
    EXPECT_LT(ms, 40.0f);
  }
}

TEST(Device, WarmUpLastsAtLeastTheMinimum) {
  KB_REQUIRE_GPU();
  select_device(0);
  const WarmupResult r = warm_up_gpu(nullptr, 100, 2000);
  EXPECT_GE(r.ms, 100.0);
  EXPECT_LE(r.ms, 2000.0 + 200.0);  // one burst may overrun max_ms
  ASSERT_FALSE(r.clock_trace_mhz.empty());
  EXPECT_EQ(r.sm_clock_mhz, r.clock_trace_mhz.back());
  EXPECT_GT(r.sm_clock_mhz, 100.0);
  const auto j = to_json(r);
  EXPECT_EQ(j["clock_trace_mhz"].size(), r.clock_trace_mhz.size());
}

// The load record read through NVML on a real GPU: every field a number (an H200 reports them
// all), of the GPU the device block names; the driver's version and the probe's clock too.
TEST(Device, LoadSnapshotReadsNvml) {
  KB_REQUIRE_GPU();
  const auto block = device_block(select_device(0));
  ASSERT_TRUE(block.contains("driver_version")) << block.dump();
  const std::string uuid = block["uuid"].get<std::string>();
  const auto load = query_gpu_load(uuid);
  ASSERT_EQ(load["available"], true) << load.dump();
  EXPECT_EQ(load["uuid"], uuid);
  for (const char* field : {"utilization_pct", "memory_utilization_pct", "sm_clock_mhz", "mem_clock_mhz",
                            "temperature_c", "power_w", "memory_used_mib"})
    EXPECT_TRUE(load[field].is_number()) << field << ": " << load.dump();
  EXPECT_GT(load["sm_clock_mhz"].get<double>(), 100.0);
  EXPECT_GT(load["power_w"].get<double>(), 1.0);  // watts, not NVML's milliwatts
  EXPECT_LT(load["power_w"].get<double>(), 2000.0);
  EXPECT_TRUE(load["clock_event_reasons"].is_object()) << load.dump();
  EXPECT_TRUE(load["processes"].is_array()) << load.dump();
  const NvmlClock clock(uuid);
  EXPECT_TRUE(clock.unavailable().empty()) << clock.unavailable();
  ASSERT_TRUE(clock.sm_mhz());
  EXPECT_GT(*clock.sm_mhz(), 100.0);
}

}  // namespace
}  // namespace kbench
