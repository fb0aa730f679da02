// The runner's timing core on the CPU: a small experiment of its own (two problems, two
// variants each, two cache modes) timed by made-up timers through time_units and turned into
// records by unit_records, with no code copied from the sweep. What it shows: every variant gets
// visits x samples samples, each visit's samples are tagged with its number, the visits of
// different units interleave, and a record's summary, bytes and GB/s follow from its samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "harness/runner.hpp"
#include "harness/units.hpp"

namespace kbench {
namespace {

// A timer whose n-th sample is base + n, and which logs who was sampled in what order.
class CountingTimer final : public Timer {
 public:
  CountingTimer(double base, std::string who, std::vector<std::string>& log) : base_(base), who_(std::move(who)), log_(log) {}
  double sample_us() override {
    log_.push_back(who_);
    return base_ + n_++;
  }
  int launches_per_sample() const override { return 1; }
  std::string note() const override { return "counting"; }
  void prime() override { log_.push_back(who_ + "/prime"); }

 private:
  double base_;
  int n_ = 0;
  std::string who_;
  std::vector<std::string>& log_;
};

struct Pairs {  // the experiment: two problems, each with a fast and a slow variant
  Problem copy, scale;
  Launchable fast, slow;
  std::vector<std::string> log;
  std::vector<Unit> units;

  Pairs() {
    copy.name = "copy";
    copy.bytes = [](const Case& c) { return 8.0 * static_cast<double>(c.shape[0]); };
    copy.flops = [](const Case&) { return 0.0; };
    scale = copy;
    scale.name = "scale";
    fast.name = "fast";
    slow.name = "slow";
    slow.baseline = true;
    for (const Problem* p : {&copy, &scale})
      for (const char* cache : {"cold", "warm"}) {
        Unit u;
        u.problem = p;
        u.c = Case{p->name, DType::f32, {1000}};
        u.cache = cache;
        u.timer = "events";
        u.variants = {&fast, &slow};
        u.checks = {CheckInfo{true, 0.5, 1.0, ""}, CheckInfo{true, 0.25, 1.0, ""}};
        const std::string who = p->name + "/" + cache;
        u.timers.push_back(std::make_unique<CountingTimer>(10, who + "/fast", log));
        u.timers.push_back(std::make_unique<CountingTimer>(100, who + "/slow", log));
        units.push_back(std::move(u));
      }
  }
};

TEST(RunnerUnits, EveryVariantIsSampledInEveryVisit) {
  Pairs e;
  const int visits = 5, samples = 3;
  std::size_t progress_calls = 0;
  time_units(e.units, visits, samples, 42, [&](std::size_t done, std::size_t total, const Unit&) {
    EXPECT_EQ(done, ++progress_calls);
    EXPECT_EQ(total, e.units.size() * visits);
  });
  EXPECT_EQ(progress_calls, e.units.size() * visits);
  // Each visit opens with one untimed launch of each of its variants, before any sample.
  const std::size_t per_visit_log = 2 + 2 * samples;
  ASSERT_EQ(e.log.size(), e.units.size() * visits * per_visit_log);
  for (std::size_t i = 0; i < e.log.size(); i += per_visit_log) {
    EXPECT_TRUE(e.log[i].ends_with("/prime") && e.log[i + 1].ends_with("/prime")) << e.log[i];
    for (std::size_t j = i + 2; j < i + per_visit_log; ++j) EXPECT_FALSE(e.log[j].ends_with("/prime")) << j;
  }
  std::erase_if(e.log, [](const std::string& w) { return w.ends_with("/prime"); });
  ASSERT_EQ(e.log.size(), e.units.size() * 2 * visits * samples);
  for (const Unit& u : e.units)
    for (std::size_t k = 0; k < 2; ++k) {
      ASSERT_EQ(u.samples[k].size(), static_cast<std::size_t>(visits * samples));
      std::map<int, int> per_visit;
      for (int v : u.sample_visits[k]) ++per_visit[v];
      ASSERT_EQ(per_visit.size(), static_cast<std::size_t>(visits));
      for (const auto& [visit, count] : per_visit) {
        EXPECT_GE(visit, 0);
        EXPECT_LT(visit, visits);
        EXPECT_EQ(count, samples);
      }
    }
  // A visit runs one unit's variants back to back, samples of a variant together...
  for (std::size_t i = 0; i < e.log.size(); i += 2 * samples) {
    const std::string unit = e.log[i].substr(0, e.log[i].rfind('/'));
    for (std::size_t j = i; j < i + 2 * samples; ++j) EXPECT_EQ(e.log[j].rfind(unit, 0), 0u) << j;
  }
  // ...and the units' visits interleave: the first unit visited is not visited five times first.
  std::set<std::string> first_visits;
  for (std::size_t i = 0; i < static_cast<std::size_t>(visits) * 2 * samples; i += 2 * samples)
    first_visits.insert(e.log[i].substr(0, e.log[i].rfind('/')));
  EXPECT_GT(first_visits.size(), 1u);
}

TEST(RunnerUnits, RecordsSummariseTheirSamples) {
  Pairs e;
  time_units(e.units, 3, 3, 7);
  const std::vector<Record> records = unit_records(e.units[0]);
  ASSERT_EQ(records.size(), 2u);
  const Record& fast = records[0];
  EXPECT_EQ(fast.op, "copy");
  EXPECT_EQ(fast.variant, "fast");
  EXPECT_FALSE(fast.baseline);
  EXPECT_TRUE(records[1].baseline);
  EXPECT_EQ(fast.cache, "cold");
  EXPECT_EQ(fast.timer_note, "counting");
  // The fast timer gave 10, 11, ..., 18: median 14, quartiles 12 and 16, min 10.
  EXPECT_DOUBLE_EQ(fast.median_us, 14.0);
  EXPECT_DOUBLE_EQ(fast.q1_us, 12.0);
  EXPECT_DOUBLE_EQ(fast.q3_us, 16.0);
  EXPECT_DOUBLE_EQ(fast.min_us, 10.0);
  EXPECT_DOUBLE_EQ(fast.bytes, 8000.0);
  EXPECT_DOUBLE_EQ(fast.gbps, 8000.0 / (14.0 * 1e3));
  EXPECT_DOUBLE_EQ(fast.check.max_err, 0.5);
  EXPECT_EQ(records[1].check.max_err, 0.25);
  EXPECT_EQ(fast.sample_visits.size(), fast.samples_us.size());
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

TEST(GraphLaunchCount, IsAMultipleOfTheSetsWithinTheBounds) {
  EXPECT_EQ(graph_launch_count(10.0, 1), 200);    // 2 ms of 10 us launches
  EXPECT_EQ(graph_launch_count(10.0, 3), 201);    // rounded up to a multiple of 3
  EXPECT_EQ(graph_launch_count(0.1, 1), kMaxGraphLaunches);  // tiny launches: the cap
  EXPECT_EQ(graph_launch_count(0.1, 3), 498);     // the cap, rounded down to a multiple
  EXPECT_EQ(graph_launch_count(5000.0, 1), kMinGraphLaunches);
  EXPECT_EQ(graph_launch_count(5000.0, 6), 6);    // every set once
  EXPECT_EQ(graph_launch_count(1.0, 700), 700);   // more sets than the cap: each once
  for (int sets = 1; sets <= 40; ++sets)
    for (const double us : {0.2, 3.0, 17.0, 400.0}) {
      const int n = graph_launch_count(us, sets);
      EXPECT_EQ(n % sets, 0) << us << " us, " << sets << " sets";
      EXPECT_GE(n, std::max(sets, kMinGraphLaunches));
    }
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

// The clock filter fed synthetic clocks: the visit that begins at 1500 MHz against a floor of
// 1800 is discarded and taken again; its samples are counted, not kept.
TEST(ClockFilter, DiscardsAndCountsAVisitBegunBelowTheFloorAndTakesItAgain) {
  Pairs e;
  e.units.resize(1);  // one unit: copy cold, variants fast and slow
  const int visits = 3, samples = 2;
  std::vector<double> clocks = {1980, 1500, 1975, 1990};  // the second visit's first try is low
  std::size_t reads = 0;
  ClockFilter filter{[&] { return clocks.at(reads++); }, 1800, 3};
  time_units(e.units, visits, samples, 5, {}, &filter);
  EXPECT_EQ(reads, 4u);
  const Unit& u = e.units[0];
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(u.samples[k].size(), static_cast<std::size_t>(visits * samples));
    EXPECT_EQ(u.discarded[k], samples);
    EXPECT_EQ(u.sample_clock_mhz[k], (std::vector<double>{1980, 1980, 1975, 1975, 1990, 1990}));
  }
  const std::vector<Record> records = unit_records(u);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].discarded_samples, samples);
  EXPECT_EQ(records[0].sample_clock_mhz.size(), records[0].samples_us.size());
  // The kept samples are those taken after the discarded ones: the counting timer's 3rd and 4th
  // samples (base + 2, + 3) went with the low visit.
  const std::vector<double>& fast = u.samples[0];
  EXPECT_EQ(std::count(fast.begin(), fast.end(), 12.0), 0);
  EXPECT_EQ(std::count(fast.begin(), fast.end(), 13.0), 0);
}

TEST(ClockFilter, AVariantWhoseEveryAttemptIsLowHasNoRecord) {
  Pairs e;
  e.units.resize(1);
  ClockFilter filter{[] { return 1000.0; }, 1800, 2};
  time_units(e.units, 2, 2, 5, {}, &filter);
  EXPECT_EQ(e.units[0].discarded[0], 2 * 2 * 2);  // 2 visits x 2 attempts x 2 samples
  EXPECT_TRUE(unit_records(e.units[0]).empty());
}

// What the run reports of it (extra.clock_filter): the low visit of one unit and a unit whose
// every attempt was low, counted per record and in all, and the record that has no sample named.
TEST(ClockFilter, TheRunReportsWhatWasDiscardedAndWhichRecordIsLost) {
  Pairs e;
  e.units.resize(2);  // copy cold and copy warm, two variants each
  // Two visits each, in the seed's order; the second visit's first attempt is low, and which
  // unit that visit was is noted after it (progress is called after each visit).
  std::size_t reads = 0;
  std::vector<std::string> visited;
  ClockFilter filter{[&] { return ++reads == 2 ? 1500.0 : 1980.0; }, 1800, 2};
  time_units(e.units, 2, 2, 5, [&](std::size_t, std::size_t, const Unit& u) { visited.push_back(u.cache); }, &filter);
  int discarded = 0;
  for (const Unit& u : e.units)
    for (const int d : u.discarded) discarded += d;
  EXPECT_EQ(discarded, 2 * 2);  // one attempt of one visit: 2 variants x 2 samples
  const nlohmann::json one = clock_filter_json(e.units, 0.9, 2000, filter.attempts);
  EXPECT_EQ(one["discarded_samples"], discarded);
  EXPECT_EQ(one["floor_mhz"], 1800);
  EXPECT_EQ(one["attempts_per_visit"], 2);
  ASSERT_EQ(one["discarded"].size(), 2u);  // both variants of the unit of that visit
  EXPECT_EQ(one["discarded"][0]["record"], "copy float32 1000 " + visited[1] + " events fast");
  EXPECT_EQ(one["discarded"][0]["samples"], 2);
  EXPECT_EQ(one["without_record"], nlohmann::json::array());

  Pairs low;
  low.units.resize(1);
  ClockFilter always_low{[] { return 1000.0; }, 1800, 2};
  time_units(low.units, 2, 2, 5, {}, &always_low);
  const nlohmann::json lost = clock_filter_json(low.units, 0.9, 2000, always_low.attempts);
  EXPECT_EQ(lost["discarded_samples"], 2 * 2 * 2 * 2);  // 2 variants x 2 visits x 2 attempts x 2 samples
  EXPECT_EQ(lost["without_record"], (nlohmann::json{"copy float32 1000 cold events fast", "copy float32 1000 cold events slow"}));
}

TEST(ClockFilter, WithoutAFilterNothingIsDiscardedOrClocked) {
  Pairs e;
  time_units(e.units, 2, 2, 5);
  for (const Unit& u : e.units) {
    EXPECT_EQ(u.discarded, (std::vector<int>{0, 0}));
    EXPECT_TRUE(u.sample_clock_mhz[0].empty());
  }
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

TEST(RunnerUnits, AStopEndsTheTimingAtAVisitBoundaryAndKeepsTheVisitsDone) {
  Pairs e;
  std::size_t asked = 0;
  const std::size_t done = time_units(e.units, 3, 2, 7, {}, nullptr, [&] { return ++asked > 5; });
  EXPECT_EQ(done, 5u);
  std::size_t samples = 0;
  for (const Unit& u : e.units)
    for (const auto& s : u.samples) {
      EXPECT_EQ(s.size() % 2, 0u);  // whole visits only
      samples += s.size();
    }
  EXPECT_EQ(samples, 5u * 2 * 2);  // 5 visits x 2 variants x 2 samples
  EXPECT_EQ(time_units(e.units, 3, 2, 7), e.units.size() * 3);  // no stop: every visit
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

// A timer that repeats a fixed cycle of samples: a steady one (every sample 10) and a noisy
// one (10, 13, 10, 13, ...: per-visit medians that never agree within 1%).
class CycleTimer final : public Timer {
 public:
  explicit CycleTimer(std::vector<double> cycle) : cycle_(std::move(cycle)) {}
  double sample_us() override { return cycle_[n_++ % cycle_.size()]; }
  int launches_per_sample() const override { return 1; }
  std::string note() const override { return "cycle"; }
  void prime() override {}

 private:
  std::vector<double> cycle_;
  std::size_t n_ = 0;
};

struct SteadyAndNoisy {
  Problem p;
  Launchable v;
  std::vector<Unit> units;
  SteadyAndNoisy() {
    p.name = "copy";
    p.bytes = [](const Case&) { return 8.0; };
    p.flops = [](const Case&) { return 0.0; };
    v.name = "only";
    for (const std::vector<double>& cycle : {std::vector<double>{10}, std::vector<double>{10, 10, 13, 13, 13, 10}}) {
      Unit u;
      u.problem = &p;
      u.c = Case{"copy", DType::f32, {static_cast<std::int64_t>(cycle.size())}};
      u.cache = "cold";
      u.timer = "events";
      u.variants = {&v};
      u.checks = {CheckInfo{true, 0, 1, ""}};
      u.timers.push_back(std::make_unique<CycleTimer>(cycle));
      units.push_back(std::move(u));
    }
  }
  std::size_t visits_of(std::size_t unit) const {
    return std::set<int>(units[unit].sample_visits[0].begin(), units[unit].sample_visits[0].end()).size();
  }
};

TEST(StoppingRule, HalfWidthIsTheOrderStatisticIntervalOfPerVisitMedians) {
  // Five visits of one sample each: the interval at 5 visits is the range (k = 1, 93.75%).
  EXPECT_DOUBLE_EQ(visit_median_halfwidth({10, 11, 9, 10, 12}, {0, 1, 2, 3, 4}), (12.0 - 9.0) / 2 / 10);
  // Samples of one visit collapse to their median first.
  EXPECT_DOUBLE_EQ(visit_median_halfwidth({10, 30, 10, 10}, {0, 0, 0, 1}), 0.0);
  EXPECT_TRUE(std::isinf(visit_median_halfwidth({10, 11}, {0, 0})));  // one visit: unknown
}

TEST(StoppingRule, OnlyTheNoisyUnitGetsMoreVisitsUpToTheCap) {
  SteadyAndNoisy e;
  const StoppingRule rule{0.01, 12, 0};
  const std::size_t done = time_units(e.units, 3, 3, 5, {}, nullptr, {}, &rule);
  EXPECT_EQ(e.visits_of(0), 3u) << "steady: settled after the planned visits";
  EXPECT_EQ(e.visits_of(1), 12u) << "noisy: to the cap";
  EXPECT_EQ(done, 3u + 12u);
  // Visit numbers continue where the planned ones ended: 0 .. 11, three samples each.
  std::map<int, int> per_visit;
  for (int v : e.units[1].sample_visits[0]) ++per_visit[v];
  EXPECT_EQ(per_visit.begin()->first, 0);
  EXPECT_EQ(per_visit.rbegin()->first, 11);
  for (const auto& [visit, count] : per_visit) EXPECT_EQ(count, 3);
}

TEST(StoppingRule, OffByDefaultAndAWideTargetStopsAtThePlannedVisits) {
  SteadyAndNoisy off;
  EXPECT_EQ(time_units(off.units, 3, 3, 5), 6u);
  SteadyAndNoisy wide;
  const StoppingRule rule{0.5, 12, 0};
  EXPECT_EQ(time_units(wide.units, 3, 3, 5, {}, nullptr, {}, &rule), 6u);
}

TEST(StoppingRule, AStopRequestEndsTheRounds) {
  SteadyAndNoisy e;
  const StoppingRule rule{0.01, 50, 0};
  int asked = 0;
  const std::size_t done = time_units(e.units, 3, 3, 5, {}, nullptr, [&] { return ++asked > 8; }, &rule);
  EXPECT_EQ(done, 8u);
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

// The floor in every visit: an empty kernel's timer per cache mode (shared by that mode's units,
// as the runner shares one), counting from its own base so that its samples are told apart.
struct PairsWithFloors : Pairs {
  CountingTimer cold_floor{1000, "floor/cold", log}, warm_floor{2000, "floor/warm", log};
  PairsWithFloors() {
    for (Unit& u : units) u.floor = u.cache == "cold" ? &cold_floor : &warm_floor;
  }
};

// The median of the floor samples a unit kept for `visit`, computed here from scratch.
double floor_median(const Unit& u, int visit) {
  std::vector<double> xs;
  for (std::size_t i = 0; i < u.floor_samples.size(); ++i)
    if (u.floor_visits[i] == visit) xs.push_back(u.floor_samples[i]);
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? -1 : xs[xs.size() / 2];  // odd counts here
}

TEST(VisitFloor, EveryVisitTimesTheFloorOfItsModeAfterThePrimesBeforeTheVariants) {
  PairsWithFloors e;
  const int visits = 4, samples = 3;
  time_units(e.units, visits, samples, 11);
  // Per visit: the two variants' primes, the floor's prime, the floor's samples, the variants'.
  const std::size_t per_visit = 3 + samples + 2 * samples;
  ASSERT_EQ(e.log.size(), e.units.size() * visits * per_visit);
  std::size_t visits_checked = 0;
  for (std::size_t i = 0; i < e.log.size(); i += per_visit) {
    const std::string unit = e.log[i + 3 + samples].substr(0, e.log[i + 3 + samples].rfind('/'));  // "copy/cold"
    const std::string floor = "floor/" + unit.substr(unit.find('/') + 1);
    EXPECT_TRUE(e.log[i].starts_with(unit) && e.log[i].ends_with("/prime")) << e.log[i];
    EXPECT_TRUE(e.log[i + 1].starts_with(unit) && e.log[i + 1].ends_with("/prime")) << e.log[i + 1];
    EXPECT_EQ(e.log[i + 2], floor + "/prime");
    for (int n = 0; n < samples; ++n) EXPECT_EQ(e.log[i + 3 + n], floor) << i;
    for (std::size_t j = i + 3 + samples; j < i + per_visit; ++j) EXPECT_TRUE(e.log[j].starts_with(unit)) << e.log[j];
    ++visits_checked;
  }
  EXPECT_EQ(visits_checked, e.units.size() * visits);

  std::size_t samples_checked = 0;
  for (const Unit& u : e.units) {
    ASSERT_EQ(u.floor_samples.size(), static_cast<std::size_t>(visits * samples));
    std::map<int, int> per_visit_count;
    for (const int v : u.floor_visits) ++per_visit_count[v];
    EXPECT_EQ(per_visit_count.size(), static_cast<std::size_t>(visits));
    for (const auto& [v, count] : per_visit_count) EXPECT_EQ(count, samples) << v;
    // Each record gives every sample its visit's floor: the median of that visit's floor samples.
    for (const Record& r : unit_records(u)) {
      ASSERT_EQ(r.sample_floor_us.size(), r.samples_us.size());
      for (std::size_t i = 0; i < r.samples_us.size(); ++i, ++samples_checked) {
        EXPECT_EQ(r.sample_floor_us[i], floor_median(u, r.sample_visits[i]));
        EXPECT_GE(r.sample_floor_us[i], u.cache == "cold" ? 1000 : 2000);
      }
    }
  }
  EXPECT_EQ(samples_checked, e.units.size() * 2 * visits * samples);
  // The floors of one mode are one timer's: four units' visits of it never repeat a sample.
  std::set<double> cold;
  for (const Unit& u : e.units)
    if (u.cache == "cold") cold.insert(u.floor_samples.begin(), u.floor_samples.end());
  EXPECT_EQ(cold.size(), 2u * visits * samples);
}

// A visit begun below the clock floor loses its floor samples with its own: the floor that is
// kept is the one of the attempt whose samples are kept.
TEST(VisitFloor, AVisitDiscardedForItsClockDiscardsItsFloorToo) {
  PairsWithFloors e;
  e.units.resize(1);  // copy cold
  std::vector<double> clocks = {1980, 1500, 1975, 1990};
  std::size_t reads = 0;
  ClockFilter filter{[&] { return clocks.at(reads++); }, 1800, 3};
  const int visits = 3, samples = 2;
  time_units(e.units, visits, samples, 5, {}, &filter);
  const Unit& u = e.units[0];
  ASSERT_EQ(reads, 4u);
  EXPECT_EQ(u.floor_samples.size(), static_cast<std::size_t>(visits * samples));
  // The floor timer gave 1000, 1001, ...: the second attempt's pair (1002, 1003) is gone.
  EXPECT_EQ(u.floor_samples, (std::vector<double>{1000, 1001, 1004, 1005, 1006, 1007}));
  EXPECT_EQ(u.floor_visits, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  const std::vector<Record> records = unit_records(u);
  ASSERT_EQ(records.size(), 2u);
  // Two samples a visit: the median is their mean.
  EXPECT_EQ(records[0].sample_floor_us, (std::vector<double>{1000.5, 1000.5, 1004.5, 1004.5, 1006.5, 1006.5}));
}

TEST(VisitFloor, TheRunsFloorsPerModeSayHowFarTheyMoved) {
  PairsWithFloors e;
  const int visits = 3, samples = 3;
  time_units(e.units, visits, samples, 2);
  const nlohmann::json floors = visit_floors_json(e.units);
  ASSERT_EQ(floors.size(), 2u);  // cold and warm, in the order first met
  EXPECT_EQ(floors[0]["cache"], "cold");
  EXPECT_EQ(floors[1]["cache"], "warm");
  for (const auto& f : floors) {
    EXPECT_EQ(f["timer"], "events");
    EXPECT_EQ(f["visits"], 2 * visits);  // two units of the mode
    ASSERT_EQ(f["samples_us"].size(), 2u * visits * samples);
    const double base = f["cache"] == "cold" ? 1000 : 2000;
    // One counting timer: its samples are base .. base + 17, each visit's three consecutive.
    EXPECT_EQ(f["min_us"], base);
    EXPECT_EQ(f["median_us"], base + 8.5);
    EXPECT_EQ(f["visit_median_range_us"], (nlohmann::json{base + 1, base + 16}));
  }
  Pairs without;
  time_units(without.units, 2, 2, 5);
  EXPECT_EQ(visit_floors_json(without.units), nlohmann::json::array());
  for (const Record& r : unit_records(without.units[0])) EXPECT_TRUE(r.sample_floor_us.empty());
}

}  // namespace
}  // namespace kbench
