// The timing core of the experiment runner, free of any GPU call so that the CPU tests can
// drive it with made-up timers: a measurement unit is one case in one cache mode with one
// timer, holding a timer per variant and the timer of an empty kernel in the same mode (its
// floor). time_units() visits every unit in a randomized order (harness/schedule.hpp) and keeps
// every raw sample, the floor's too, with the visit it belongs to; unit_records() turns a timed
// unit into result records.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/problem.hpp"
#include "harness/schedule.hpp"
#include "harness/timers.hpp"
#include "record/result.hpp"

namespace kbench {

struct Unit {
  const Problem* problem = nullptr;
  Case c;
  std::string cache, timer;
  std::vector<const Launchable*> variants;      // the ones that passed their check
  std::vector<CheckInfo> checks;                // parallel to variants
  std::vector<std::unique_ptr<Timer>> timers;   // parallel to variants
  std::vector<std::vector<double>> samples;     // filled by time_units
  std::vector<std::vector<int>> sample_visits;  // the visit each sample belongs to
  // With a clock filter: the SM clock (MHz) read before the visit of each kept sample, and per
  // variant the samples discarded because their visit began below the filter's floor.
  std::vector<std::vector<double>> sample_clock_mhz;
  std::vector<int> discarded;
  // The floor: an empty kernel timed the way this unit's timer times its variants (same cache
  // mode and timer; harness/timer_floor.hpp make_floor_timer), sampled in every visit, so that
  // each visit says what the least of its samples could read at that moment (the per-launch
  // cost has been seen to move between processes and within one, methodology.md section 4).
  // Shared by the units of one cache mode and timer; nullptr: no floor is taken.
  Timer* floor = nullptr;
  std::vector<double> floor_samples;  // filled by time_units: every kept visit's floor samples
  std::vector<int> floor_visits;      // the visit each belongs to
};

// The per-visit clock check: `read` gives the SM clock in MHz (device/clock.hpp VisitClock on
// the GPU, anything in a test); a visit that begins below `floor_mhz` has its samples discarded
// and counted, and is taken again, up to `attempts` times in all, the last attempt's samples
// then discarded as well. Why before the visit and not after: a clock that is low before any of
// the visit's work (a GPU come back from idle, another process's load) says the samples are not
// what the kernel costs; a clock that drops under the visit's own work (a power-bound GEMM) is
// part of its cost.
struct ClockFilter {
  std::function<double()> read;
  double floor_mhz = 0;
  int attempts = 3;
};

// Called after each visit with (visits done, visits in all, the unit just visited).
using VisitProgress = std::function<void(std::size_t, std::size_t, const Unit&)>;

// The relative half-width (half the interval over the median) of the order-statistic interval
// (core/stats.hpp median_rank_interval) of the medians of each visit's samples; infinite with
// fewer than two visits.
double visit_median_halfwidth(const std::vector<double>& samples, const std::vector<int>& visits);

// `visits` visits to every unit in an order shuffled from `seed`; in each visit the unit's
// variants run back to back, in an order shuffled again, `samples` samples each; then, with a
// stopping rule whose target is above 0, its rounds. `stop`, asked before each visit, ends the
// timing early (an interrupted run): the visits done keep their samples. Returns the number of
// visits done.
std::size_t time_units(std::vector<Unit>& units, int visits, int samples, std::uint64_t seed,
                       const VisitProgress& progress = {}, const ClockFilter* clock = nullptr,
                       const std::function<bool()>& stop = {}, const StoppingRule* rule = nullptr);

// One record per variant of a timed unit: every raw sample, its summary, bytes and GB/s, and
// with a floor, each sample's visit's floor (the median of the empty kernel's samples in it).
std::vector<Record> unit_records(const Unit& u);

// What the clock filter did, for extra.clock_filter: its floor (`floor` of the warm clock
// `warm_mhz`) and attempts, the samples it discarded in all ("discarded_samples") and per record
// ("discarded": [{"record": "<case> <cache> <timer> <variant>", "samples"}]), and the records
// left without a sample ("without_record": every visit began below the floor). Logs a warning
// for each.
nlohmann::json clock_filter_json(const std::vector<Unit>& units, double floor, double warm_mhz, int attempts);

// The floors taken in the visits, per cache mode and timer of the units (in the order first
// met): {"cache", "timer", "visits" (how many visits took one), "median_us", "q1_us", "q3_us",
// "min_us" (of every floor sample), "visit_median_range_us" ([least, greatest] median of one
// visit's floor samples: how far the floor moved during the visits), "samples_us" (every floor
// sample, unit by unit, each unit's in the order taken)}. Empty when no unit has a floor.
nlohmann::json visit_floors_json(const std::vector<Unit>& units);

}  // namespace kbench
