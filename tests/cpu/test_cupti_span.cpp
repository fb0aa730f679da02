// The cupti timer's arithmetic: which activity records belong to a sample and the span they
// cover (harness/cupti_timer.hpp). The records themselves come from the GPU tests.
#include <gtest/gtest.h>

#include "experiments/sweep_config.hpp"
#include "harness/cupti_timer.hpp"
#include "core/errors.hpp"

namespace kbench {
namespace {

TEST(CuptiSpan, RunsFromTheFirstStartToTheLastEndOfTheSamplesWork) {
  // Correlation 7 and 9 were issued under sample 3; 8 under sample 2 (an earlier sample whose
  // records arrived late) and 5 by no sample (the gate and the flush).
  const std::vector<GpuSpan> spans = {{5, 0, 900}, {7, 1000, 4000}, {8, 500, 9000}, {9, 4500, 6500}};
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> external = {{7, 3}, {9, 3}, {8, 2}};
  EXPECT_DOUBLE_EQ(sample_span_us(spans, external, 3), 5.5);  // 1000 .. 6500 ns
  EXPECT_DOUBLE_EQ(sample_span_us(spans, external, 2), 8.5);
}

TEST(CuptiSpan, IsNegativeWhenTheSampleLeftNoRecord) {
  const std::vector<GpuSpan> spans = {{5, 0, 900}};
  EXPECT_LT(sample_span_us(spans, {{5, 1}}, 2), 0);
  EXPECT_LT(sample_span_us({}, {}, 1), 0);
  // A correlation record without work (an API call that launched nothing) adds nothing.
  EXPECT_LT(sample_span_us(spans, {{6, 2}}, 2), 0);
}

TEST(TimerNames, CuptiIsATimerAndAllNamesTheThree) {
  EXPECT_EQ(parse_timers("cupti"), (std::vector<std::string>{"cupti"}));
  EXPECT_EQ(parse_timers("both"), (std::vector<std::string>{"events", "graph"}));
  EXPECT_EQ(parse_timers("all"), (std::vector<std::string>{"events", "graph", "cupti"}));
  EXPECT_THROW(parse_timers("ncu"), UsageError);
  EXPECT_THROW(parse_timers("CUPTI"), UsageError);
}

}  // namespace
}  // namespace kbench
