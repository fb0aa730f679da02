// The sweep's check that each timer's floor held still during preparation and during its visits.
#include <gtest/gtest.h>

#include "harness/timer_floor.hpp"

namespace kbench {
namespace {

nlohmann::json floors(double events_us, double graph_us) {
  return nlohmann::json::array({{{"cache", "cold"}, {"timer", "events"}, {"median_us", events_us}},
                                {{"cache", "cold"}, {"timer", "graph"}, {"median_us", graph_us}}});
}

TEST(TimerFloor, AShiftBeyondTheToleranceIsNamed) {
  // The H200 readings that motivated the check: 0.506 against 0.687 us per launch in graph mode.
  const auto lines = floor_shifts(floors(2.816, 0.506), floors(2.848, 0.687), 0.10, "the visits");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("during the visits: cold graph 0.506 -> 0.687 us"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("+36%"), std::string::npos) << lines[0];
}

TEST(TimerFloor, DropsCountAsMuchAsRises) {
  const auto lines = floor_shifts(floors(3.0, 0.5), floors(2.5, 0.5), 0.10, "the visits");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("cold events"), std::string::npos) << lines[0];
}

TEST(TimerFloor, SteadyOrUnmatchedFloorsGiveNothing) {
  EXPECT_TRUE(floor_shifts(floors(2.816, 0.506), floors(2.9, 0.52), 0.10, "preparation").empty());
  const nlohmann::json warm_only = nlohmann::json::array(
      {{{"cache", "warm"}, {"timer", "graph"}, {"median_us", 9.0}}});
  EXPECT_TRUE(floor_shifts(floors(2.816, 0.506), warm_only, 0.10, "preparation").empty());
  EXPECT_TRUE(floor_shifts(nlohmann::json::object(), floors(1, 1), 0.10, "preparation").empty());
}

}  // namespace
}  // namespace kbench
