// kbench probe's analysis on small synthetic series, its records digest, its report, and its
// bad input (one line, exit 2, nothing written). No GPU needed.
#include <gtest/gtest.h>

#include <filesystem>

#include "cpu/run_command.hpp"
#include "core/errors.hpp"
#include "experiments/probe.hpp"
#include "experiments/probe_analysis.hpp"
#include "report/report.hpp"

namespace kbench {
namespace {

// A series every 10 ms: `slow` leading samples decaying from `first_us` towards 10 us, then 10 us
// at 2000 MHz (the clock scaled by the same factor, since the kernel's work is fixed).
ProbeSeries ramp(double pause_s, int repetition, int slow, double first_us, int count = 40) {
  ProbeSeries s;
  s.pause_s = pause_s;
  s.repetition = repetition;
  for (int i = 0; i < count; ++i) {
    const double us = i < slow ? 10 + (first_us - 10) * (slow - i) / slow : 10;
    s.samples.push_back({10.0 * i, us, 2000 * 10 / us, 1980});
  }
  return s;
}

TEST(ProbeAnalysis, SettleTimeIsAfterTheLastSlowSample) {
  const ProbeSeries s = ramp(5, 0, 4, 25);
  const auto time_of = [](const ProbeSample& x) { return x.us; };
  EXPECT_EQ(settle_ms(s, 10, 0.02, time_of), 40.0);  // samples 0-3 slow: settled at the 5th, 40 ms
  ProbeSeries never = s;
  never.samples.back().us = 12;
  EXPECT_FALSE(settle_ms(never, 10, 0.02, time_of).has_value());
}

TEST(ProbeAnalysis, ALoneOutlierIsNotTheClockButAFirstSlowSampleIs) {
  const auto time_of = [](const ProbeSample& x) { return x.us; };
  ProbeSeries s = ramp(1, 0, 0, 10);
  s.samples[20].us = 30;  // neighbours inside: an interrupt, not the clock
  EXPECT_EQ(settle_ms(s, 10, 0.02, time_of), 0.0);
  s.samples[21].us = 30;  // two in a row count
  EXPECT_EQ(settle_ms(s, 10, 0.02, time_of), 220.0);
  ProbeSeries first = ramp(1, 0, 0, 10);
  first.samples[0].us = 25;  // the predecessor's case: only the first sample slow
  EXPECT_EQ(settle_ms(first, 10, 0.02, time_of), 10.0);
}

TEST(ProbeAnalysis, PerPauseSlowdownSettleAndWarmupNeeded) {
  std::vector<ProbeSeries> series = {ramp(0, 0, 0, 10), ramp(0, 1, 0, 10), ramp(20, 0, 6, 25),
                                     ramp(20, 1, 3, 20)};
  const auto a = analyse_probe(series, 0.02, 300);
  EXPECT_DOUBLE_EQ(a["steady_us"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(a["steady_sm_mhz"].get<double>(), 2000);
  ASSERT_EQ(a["pauses"].size(), 2u);
  const auto& warm = a["pauses"][0];
  EXPECT_EQ(warm["pause_s"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(warm["first_slowdown"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(warm["share_within"].get<double>(), 1);  // warmed runs are steady
  EXPECT_EQ(warm["settle_ms"].get<double>(), 0);
  const auto& idle = a["pauses"][1];
  EXPECT_DOUBLE_EQ(idle["first_us"].get<double>(), 22.5);  // median of 25 and 20
  EXPECT_DOUBLE_EQ(idle["first_us_max"].get<double>(), 25);
  EXPECT_DOUBLE_EQ(idle["first_slowdown"].get<double>(), 2.25);
  EXPECT_EQ(idle["settle_ms"].get<double>(), 60);  // the longer repetition
  EXPECT_EQ(idle["clock_settle_ms"].get<double>(), 60);
  EXPECT_DOUBLE_EQ(idle["first_nvml_mhz"].get<double>(), 1980);
  EXPECT_EQ(a["warmup_needed_ms"].get<double>(), 60);
  const std::string said = a["statement"].get<std::string>();
  EXPECT_NE(said.find("2.50x"), std::string::npos) << said;
  EXPECT_NE(said.find("covers it"), std::string::npos) << said;
}

TEST(ProbeAnalysis, ASeriesThatNeverSettlesSaysTheWindowWasShort) {
  ProbeSeries hot = ramp(2, 0, 0, 10);
  for (int i = 30; i < 40; ++i) hot.samples[i].us = 13;  // the second half drifts away
  const auto a = analyse_probe({ramp(0, 0, 0, 10), ramp(0, 1, 0, 10), ramp(0, 2, 0, 10), hot}, 0.02, 300);
  EXPECT_TRUE(a["warmup_needed_ms"].is_null());
  EXPECT_TRUE(a["pauses"][1]["settle_ms"].is_null());
  EXPECT_NE(a["statement"].get<std::string>().find("never settled"), std::string::npos);
}

TEST(ProbeAnalysis, SeriesRoundTripThroughJsonAndTheResult) {
  ProbeSeries s = ramp(0.5, 2, 3, 15, 5);
  s.position = 7;
  s.samples[1].nvml_mhz.reset();
  const ProbeSeries back = series_from_json(series_to_json(s));
  EXPECT_EQ(back.pause_s, 0.5);
  EXPECT_EQ(back.repetition, 2);
  EXPECT_EQ(back.position, 7);
  ASSERT_EQ(back.samples.size(), 5u);
  EXPECT_FALSE(back.samples[1].nvml_mhz.has_value());
  EXPECT_EQ(back.samples[3].us, s.samples[3].us);

  Result r;
  r.experiment = "probe";
  r.extra["probe"]["series"] = nlohmann::json::array({series_to_json(ramp(0, 0, 0, 10)), series_to_json(s)});
  const auto a = analyse_probe_result(r, 0.05);
  EXPECT_EQ(a["tolerance"].get<double>(), 0.05);
  EXPECT_EQ(a["pauses"].size(), 2u);
}

TEST(ProbeSettings, PausesMustBeNonNegativeAndIncreasing) {
  EXPECT_NO_THROW(require_sorted_pauses({0, 0.1, 20}));
  EXPECT_THROW(require_sorted_pauses({}), UsageError);
  EXPECT_THROW(require_sorted_pauses({-1, 2}), UsageError);
  EXPECT_THROW(require_sorted_pauses({0, 2, 1}), UsageError);
  EXPECT_THROW(require_sorted_pauses({1, 1}), UsageError);
  ProbeSettings s;
  EXPECT_NO_THROW(validate_probe_settings(s));
  s.repeats = 0;
  EXPECT_THROW(validate_probe_settings(s), UsageError);
}

TEST(ProbeReport, ShowsTheAnalysisTableAndStatement) {
  Result r;
  r.experiment = "probe";
  r.extra["probe"]["analysis"] = analyse_probe({ramp(0, 0, 0, 10), ramp(20, 0, 6, 25)}, 0.02, 300);
  const std::string md = build_report({{"probe.json", r}}, ReportFilter{});
  EXPECT_NE(md.find("## clock probe"), std::string::npos) << md;
  EXPECT_NE(md.find("| 20 | 1 | 25.000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("2.50x"), std::string::npos) << md;
  EXPECT_EQ(md.find("No records"), std::string::npos) << md;
}

// Bad pauses: one line, exit 2, and no results folder, before any device is touched.
TEST(ProbeCli, BadPausesWriteNothing) {
  const auto dir = test::fresh_temp_dir();
  for (const std::string pauses : {"0,2,1", "0,-1", "1,1"}) {
    const auto o = test::run_kbench("probe --pauses=" + pauses + " --out " + test::shell_quoted(dir));
    EXPECT_EQ(o.exit_code, 2) << pauses << ": " << o.err;
    EXPECT_EQ(test::line_count(o.err), 1) << pauses << ": " << o.err;
    EXPECT_NE(o.err.find("pauses"), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "probe"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kbench
