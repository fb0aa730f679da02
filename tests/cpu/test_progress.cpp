// The runner's progress (harness/progress.hpp): the ETA's arithmetic, one log line per phase and
// nothing drawn off a terminal, and on one a line redrawn at most ten times a second and cleared
// at the end, driven by a made-up clock.
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "harness/progress.hpp"

namespace kbench {
namespace {

TEST(Progress, EtaIsTheRateSoFarOverWhatIsLeft) {
  // 10 of 40 items in 20 s: 2 s each, 30 left.
  ASSERT_TRUE(eta_seconds(10, 40, 20.0).has_value());
  EXPECT_DOUBLE_EQ(*eta_seconds(10, 40, 20.0), 60.0);
  EXPECT_DOUBLE_EQ(*eta_seconds(kEtaAfterItems, 2 * kEtaAfterItems, 1.5), 1.5);
  // Too few done for a rate, or nothing left.
  EXPECT_FALSE(eta_seconds(kEtaAfterItems - 1, 40, 5.0).has_value());
  EXPECT_FALSE(eta_seconds(40, 40, 80.0).has_value());
  EXPECT_FALSE(eta_seconds(41, 40, 80.0).has_value());  // a stopping rule's extra visits
}

TEST(Progress, ClockText) {
  EXPECT_EQ(clock_text(0), "0:00");
  EXPECT_EQ(clock_text(7.4), "0:07");
  EXPECT_EQ(clock_text(754), "12:34");
  EXPECT_EQ(clock_text(3723), "1:02:03");
  EXPECT_EQ(clock_text(-1), "0:00");
}

struct Fixture {
  double t = 100;
  std::ostringstream line;
  std::vector<std::string> logged;
  ProgressOutput output(bool terminal) {
    ProgressOutput out;
    out.terminal = terminal;
    out.line = &line;
    out.log = [this](const std::string& s) { logged.push_back(s); };
    out.now = [this] { return t; };
    return out;
  }
};

TEST(Progress, OffATerminalEachPhaseIsOneLineWhenItEnds) {
  Fixture f;
  {
    PhaseProgress prepare(f.output(false), "preparing and checking", 4, "cases");
    for (std::size_t i = 1; i <= 4; ++i) {
      f.t += 2.5;
      prepare.advance(i, 4, "case " + std::to_string(i));
    }
    EXPECT_TRUE(f.logged.empty()) << "nothing before the phase ends";
    prepare.finish("12 checks 3.0 s");
    prepare.finish();  // a second finish says nothing more
  }
  {
    PhaseProgress visits(f.output(false), "timing", 6, "visits");
    f.t += 1.5;
    visits.advance(6, 6);
  }  // ended by its destructor
  EXPECT_EQ(f.line.str(), "") << "nothing is drawn off a terminal";
  ASSERT_EQ(f.logged.size(), 2u);
  EXPECT_EQ(f.logged[0], "preparing and checking: 4 cases in 10.0 s (12 checks 3.0 s)");
  EXPECT_EQ(f.logged[1], "timing: 6 visits in 1.5 s");
}

TEST(Progress, OnATerminalTheLineIsRedrawnAtMostTenTimesASecondThenCleared) {
  Fixture f;
  PhaseProgress p(f.output(true), "timing", 100, "visits");
  for (std::size_t i = 1; i <= 100; ++i) {
    f.t += 0.01;  // 100 visits a second: ten of them draw
    p.advance(i, 100, "rmsnorm");
  }
  const std::string drawn = f.line.str();
  std::size_t draws = 0;
  for (std::size_t at = drawn.find("\r\033[Ktiming"); at != std::string::npos; at = drawn.find("\r\033[Ktiming", at + 1))
    ++draws;
  EXPECT_GE(draws, 9u);
  EXPECT_LE(draws, 11u);
  EXPECT_NE(drawn.find("\r\033[Ktiming 1/100 visits, 0:00: rmsnorm"), std::string::npos) << "the first is drawn at once";
  p.finish();
  EXPECT_TRUE(f.line.str().ends_with("\r\033[K")) << "the line is cleared at the end";
  ASSERT_EQ(f.logged.size(), 1u);
  EXPECT_EQ(f.logged[0], "timing: 100 visits in 1.0 s");
}

TEST(Progress, TheLineShowsTheEtaOnceAFewItemsAreDone) {
  Fixture f;
  PhaseProgress p(f.output(true), "preparing and checking", 20, "cases");
  f.t += 10;
  p.advance(kEtaAfterItems - 1, 20);
  EXPECT_EQ(p.line_text(10).find("ETA"), std::string::npos);
  p.advance(5, 20, "softmax float32 [8, 4096]");
  EXPECT_EQ(p.line_text(10), "preparing and checking 5/20 cases, 0:10, ETA 0:30: softmax float32 [8, 4096]");
  EXPECT_EQ(p.line_text(200), "preparing and checking 5/20 cases, 3:20, ETA 10:00: softmax float32 [8, 4096]");
}

TEST(Progress, ALongLineIsCutToTheTerminal) {
  Fixture f;
  ProgressOutput out = f.output(true);
  out.width = 20;
  PhaseProgress p(out, "preparing and checking", 20, "cases");
  p.advance(1, 20, "a long case label");
  EXPECT_EQ(p.line_text(0).size(), 20u);
}

TEST(Progress, ALogMessageClearsTheDrawnLineFirst) {
  Fixture f;
  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>(
      "progress_test", progress_clearing_sink(std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  logger->set_pattern("%v");
  PhaseProgress p(f.output(true), "timing", 10, "visits");
  p.advance(1, 10);
  ASSERT_TRUE(f.line.str().ends_with("timing 1/10 visits, 0:00"));
  logger->warn("check failed");
  EXPECT_TRUE(f.line.str().ends_with("\r\033[K")) << f.line.str();
  EXPECT_EQ(log.str(), "check failed\n");
  f.t += 0.01;  // within the redraw interval, but nothing is drawn: drawn again at once
  p.advance(2, 10);
  EXPECT_TRUE(f.line.str().ends_with("timing 2/10 visits, 0:00")) << f.line.str();
  p.finish();
  const std::string before = f.line.str();
  logger->warn("after the phase");
  EXPECT_EQ(f.line.str(), before) << "an ended phase's line is not cleared again";
}

// The real output, set up as main() sets it (log_to_stderr): the phase lines and every other log
// message go to stderr, never stdout (the table, csv or json); --quiet (the warn level) leaves
// the phase lines out. On the H200 the GPU test found them on stdout while spdlog's default
// logger wrote there.
TEST(Progress, ThePhaseLinesAndLogMessagesOfTheRealOutputGoToStderr) {
  const std::shared_ptr<spdlog::logger> before = spdlog::default_logger();
  log_to_stderr();
  const ProgressOutput out = stderr_progress();
  ASSERT_TRUE(out.log);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  out.log("timing: 3 visits in 0.1 s");
  spdlog::warn("a warning of the run");
  spdlog::set_level(spdlog::level::warn);
  out.log("checking: 1 cases in 0.1 s");
  spdlog::set_level(spdlog::level::info);
  std::fflush(nullptr);
  const std::string stdout_text = testing::internal::GetCapturedStdout();
  const std::string stderr_text = testing::internal::GetCapturedStderr();
  spdlog::set_default_logger(before);  // the other tests' logger, as they found it
  EXPECT_EQ(stdout_text, "");
  EXPECT_NE(stderr_text.find("] info timing: 3 visits in 0.1 s\n"), std::string::npos) << stderr_text;
  EXPECT_NE(stderr_text.find("] warning a warning of the run\n"), std::string::npos) << stderr_text;
  EXPECT_EQ(stderr_text.find("checking:"), std::string::npos) << "a line under --quiet: " << stderr_text;
}

}  // namespace
}  // namespace kbench
