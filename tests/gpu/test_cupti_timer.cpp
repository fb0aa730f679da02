// The cupti timer against work of known length and against the other two timers. Spins of a
// set duration (launch_queue_delay, which waits on %globaltimer) give kernels whose time is
// known without any timer; a large copy is where all three timers must agree, since launch
// overhead is then a small share of the interval.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/stats.hpp"
#include "gpu_test.hpp"
#include "harness/cupti_timer.hpp"
#include "harness/l2_flush.hpp"
#include "harness/runner.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

double median_of(Timer& t, int samples) {
  std::vector<double> us;
  for (int i = 0; i < samples; ++i) us.push_back(t.sample_us());
  return summarize(us).median;
}

TEST(CuptiTimer, MeasuresASpinOfKnownLength) {
  KB_REQUIRE_GPU();
  const DeviceSet nothing;
  const auto spin = [](double us) {
    return [us](const DeviceSet&, cudaStream_t s) { launch_queue_delay(s, us); };
  };
  const auto one = make_cupti_timer(spin(100), nothing, nullptr, nullptr);
  const double t = median_of(*one, 5);
  // A spin of 100 us by %globaltimer ends 100 us after it starts; the kernel's own start and
  // end add well under a microsecond.
  EXPECT_GE(t, 100.0);
  EXPECT_LT(t, 103.0);
  EXPECT_EQ(one->launches_per_sample(), 1);
}

TEST(CuptiTimer, SpansEveryKernelOfALaunch) {
  KB_REQUIRE_GPU();
  const DeviceSet nothing;
  // Two kernels in one launch: the sample runs from the first's start to the second's end.
  const auto two = make_cupti_timer([](const DeviceSet&, cudaStream_t s) {
    launch_queue_delay(s, 30);
    launch_queue_delay(s, 30);
  }, nothing, nullptr, nullptr);
  const double t = median_of(*two, 5);
  EXPECT_GE(t, 60.0);
  EXPECT_LT(t, 70.0);
}

TEST(CuptiTimer, RefusesALaunchThatIssuedNoWork) {
  KB_REQUIRE_GPU();
  const DeviceSet nothing;
  const auto idle = make_cupti_timer([](const DeviceSet&, cudaStream_t) {}, nothing, nullptr, nullptr);
  EXPECT_THROW(idle->sample_us(), std::runtime_error);
  // The timer is usable again after the failed sample (collection was switched off).
  const auto spin = make_cupti_timer([](const DeviceSet&, cudaStream_t s) { launch_queue_delay(s, 10); }, nothing,
                                     nullptr, nullptr);
  EXPECT_GE(spin->sample_us(), 10.0);
}

// Copy's variants on 2^26 float32 elements (256 MiB each way, about 0.13 ms), cold, in all
// three timers through the runner: the kernel time (cupti) is below the event pair's interval
// by the launch cost, a few microseconds at most (both sample one launch after the same L2
// flush). Graph replay is no reference here: its launches run back to back on the same buffers,
// each paying the write-back of the last one's dirty lines (140.0 against cupti's 132.9 us on
// the H200, where a flush before each launch leaves the L2 clean).
TEST(CuptiTimer, AgreesWithTheOtherTimersOnALargeCopy) {
  KB_REQUIRE_GPU();
  const Op& copy = registry().op("copy");
  Experiment e;
  e.name = "timers";
  e.sources = {"tests/gpu/test_cupti_timer"};
  e.how.caches = {"cold"};
  e.how.timers = {"events", "graph", "cupti"};
  e.how.visits = 3;
  e.how.samples = 3;
  MeasuredCase mc{&copy, Case{"copy", DType::f32, {std::int64_t{1} << 26}}, {}, {}};
  for (const Variant* v : registry().variants("copy")) mc.variants.push_back(v);
  ASSERT_EQ(mc.variants.size(), 2u);  // memcpy and vec16: the loop below checks both
  e.cases = {mc};
  const Result r = run_experiment(e, {"test"});
  for (const Launchable* v : mc.variants) {
    double events = 0, graph = 0, cupti = 0;
    for (const Record& rec : r.records) {
      if (rec.variant != v->name) continue;
      (rec.timer == "events" ? events : rec.timer == "graph" ? graph : cupti) = rec.median_us;
    }
    ASSERT_GT(cupti, 0) << v->name;
    ASSERT_GT(graph, 0) << v->name;
    EXPECT_LT(cupti, events) << v->name;
    EXPECT_LT(events - cupti, 5.0) << v->name << ": cupti " << cupti << " us, events " << events << " us";
  }
  // The floor of each timer is recorded, and an empty kernel's kernel time is below the event
  // pair's.
  double floor_events = 0, floor_cupti = 0;
  for (const auto& f : r.extra.at("timer_floor")) {
    if (f.at("timer") == "events") floor_events = f.at("median_us").get<double>();
    if (f.at("timer") == "cupti") floor_cupti = f.at("median_us").get<double>();
  }
  EXPECT_GT(floor_cupti, 0);
  EXPECT_LT(floor_cupti, floor_events);
}

}  // namespace
}  // namespace kbench
