// kbench probe on the GPU, shortened: two pauses, one repetition each, 50 ms windows. The host
// gate releases every sample, the kernel's own clock reads a plausible SM clock, and the records
// and analysis come out as the CPU tests expect them from synthetic series.
#include <gtest/gtest.h>

#include "experiments/probe.hpp"
#include "gpu_test.hpp"

namespace kbench {
namespace {

TEST(Probe, ShortRunGivesRecordsSeriesAndAnalysis) {
  KB_REQUIRE_GPU();
  ProbeSettings s;
  s.pauses_s = {0, 0.2};
  s.repeats = 1;
  s.window_ms = 50;
  s.load_ms = 5;
  const Result r = run_experiment(probe_experiment(s), {"test"});
  ASSERT_EQ(r.records.size(), 4u);  // per pause: every sample, and the first
  for (const Record& rec : r.records) {
    EXPECT_EQ(rec.op, "clock_probe");
    EXPECT_GT(rec.median_us, 0);
  }
  EXPECT_EQ(r.records[1].variant, "after_0s_first");
  EXPECT_EQ(r.records[1].samples_us.size(), 1u);
  EXPECT_GE(r.records[0].samples_us.size(), 5u);  // 50 ms at 5 ms of load per sample, give or take
  const auto& series = r.extra.at("probe").at("series");
  ASSERT_EQ(series.size(), 2u);
  for (const auto& one : series) {
    EXPECT_EQ(one.at("since_ms")[0].get<double>(), 0);
    for (const auto& mhz : one.at("sm_mhz")) {
      ASSERT_TRUE(mhz.is_number());
      EXPECT_GT(mhz.get<double>(), 100);
      EXPECT_LT(mhz.get<double>(), 5000);
    }
  }
  const auto& a = r.extra.at("probe").at("analysis");
  EXPECT_EQ(a.at("pauses").size(), 2u);
  EXPECT_GT(a.at("steady_us").get<double>(), 0);
  EXPECT_TRUE(r.manifest.at("measured").contains("clock_probe"));
}

}  // namespace
}  // namespace kbench
