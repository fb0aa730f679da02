#include "harness/units.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "harness/schedule.hpp"
#include "core/stats.hpp"

namespace kbench {

double visit_median_halfwidth(const std::vector<double>& samples, const std::vector<int>& visits) {
  std::map<int, std::vector<double>> by_visit;
  for (std::size_t i = 0; i < samples.size() && i < visits.size(); ++i) by_visit[visits[i]].push_back(samples[i]);
  if (by_visit.size() < 2) return std::numeric_limits<double>::infinity();
  std::vector<double> medians;
  for (const auto& [visit, xs] : by_visit) medians.push_back(quantile(xs, 0.5));
  const double median = quantile(medians, 0.5);
  std::sort(medians.begin(), medians.end());
  const RankInterval ri = median_rank_interval(medians.size());
  const double half = (medians[medians.size() - ri.k] - medians[ri.k - 1]) / 2;
  return median > 0 ? half / median : std::numeric_limits<double>::infinity();
}

namespace {

bool unit_settled(const Unit& u, double target) {
  for (std::size_t k = 0; k < u.samples.size(); ++k)
    if (visit_median_halfwidth(u.samples[k], u.sample_visits[k]) > target) return false;
  return true;
}

}  // namespace

std::size_t time_units(std::vector<Unit>& units, int visits, int samples, std::uint64_t seed,
                       const VisitProgress& progress, const ClockFilter* clock, const std::function<bool()>& stop,
                       const StoppingRule* rule) {
  std::vector<std::size_t> sizes;
  for (Unit& u : units) {
    sizes.push_back(u.timers.size());
    u.samples.assign(u.timers.size(), {});
    u.sample_visits.assign(u.timers.size(), {});
    u.sample_clock_mhz.assign(u.timers.size(), {});
    u.discarded.assign(u.timers.size(), 0);
    u.floor_samples.clear();
    u.floor_visits.clear();
  }
  std::vector<std::vector<double>> taken;
  std::vector<double> floor_taken;
  const auto run_visit = [&](Unit& u, int number, const std::vector<std::size_t>& variant_order) {
    const int attempts = clock ? std::max(clock->attempts, 1) : 1;
    for (int attempt = 0; attempt < attempts; ++attempt) {
      const double mhz = clock ? clock->read() : 0;
      // One untimed launch of each variant first: whatever the visits in between did to the
      // GPU's caches of code, pages and graphs, the timed samples find this unit's work in place.
      for (std::size_t k : variant_order) u.timers[k]->prime();
      if (u.floor) u.floor->prime();
      // The floor's samples open the visit, after the primes, as many as each variant's: they
      // see the GPU as the variants do. A fixed place rather than a shuffled one, so that the
      // variants' order drawn from a seed stays what it was before the floor joined the visit.
      floor_taken.clear();
      if (u.floor)
        for (int n = 0; n < samples; ++n) floor_taken.push_back(u.floor->sample_us());
      taken.assign(u.timers.size(), {});
      for (std::size_t k : variant_order)
        for (int n = 0; n < samples; ++n) taken[k].push_back(u.timers[k]->sample_us());
      if (clock && mhz < clock->floor_mhz) {  // the floor's samples go with the visit's
        for (std::size_t k = 0; k < taken.size(); ++k) u.discarded[k] += static_cast<int>(taken[k].size());
        continue;
      }
      for (std::size_t k = 0; k < taken.size(); ++k)
        for (const double us : taken[k]) {
          u.samples[k].push_back(us);
          u.sample_visits[k].push_back(number);
          if (clock) u.sample_clock_mhz[k].push_back(mhz);
        }
      for (const double us : floor_taken) {
        u.floor_samples.push_back(us);
        u.floor_visits.push_back(number);
      }
      break;
    }
  };

  const std::vector<Visit> order = visit_order(sizes, visits, seed);
  const auto began = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (stop && stop()) return i;
    run_visit(units[order[i].unit], order[i].number, order[i].variant_order);
    if (progress) progress(i + 1, order.size(), units[order[i].unit]);
  }
  std::size_t done = order.size();
  if (!rule || rule->target <= 0) return done;

  // The stopping rule: rounds of one more visit to each unit still open, shuffled as the planned
  // visits were (from the seed and the round), until none is.
  std::vector<int> visited(units.size(), visits);
  for (std::uint64_t round = 1;; ++round) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    std::vector<std::size_t> open, open_sizes;
    for (std::size_t i = 0; i < units.size(); ++i)
      if (visited[i] < rule->max_visits && (elapsed < rule->min_seconds || !unit_settled(units[i], rule->target))) {
        open.push_back(i);
        open_sizes.push_back(sizes[i]);
      }
    if (open.empty()) return done;
    for (const Visit& v : visit_order(open_sizes, 1, seed + round)) {
      if (stop && stop()) return done;
      const std::size_t unit = open[v.unit];
      run_visit(units[unit], visited[unit]++, v.variant_order);
      ++done;
      if (progress) progress(done, std::max(done, order.size()), units[unit]);
    }
  }
}

namespace {

// The median of each visit's floor samples, by visit.
std::map<int, double> floor_by_visit(const Unit& u) {
  std::map<int, std::vector<double>> samples;
  for (std::size_t i = 0; i < u.floor_samples.size() && i < u.floor_visits.size(); ++i)
    samples[u.floor_visits[i]].push_back(u.floor_samples[i]);
  std::map<int, double> medians;
  for (const auto& [visit, xs] : samples) medians[visit] = quantile(xs, 0.5);
  return medians;
}

}  // namespace

std::vector<Record> unit_records(const Unit& u) {
  const std::map<int, double> floors = floor_by_visit(u);
  std::vector<Record> records;
  for (std::size_t k = 0; k < u.variants.size(); ++k) {
    if (u.samples[k].empty()) continue;  // every visit below the clock floor: nothing to record
    Record r;
    r.op = u.c.op;
    r.variant = u.variants[k]->name;
    r.baseline = u.variants[k]->baseline;
    r.dtype = std::string(dtype_name(u.c.dtype));
    r.shape = u.c.shape;
    r.params = u.c.params;
    r.cache = u.cache;
    r.timer = u.timer;
    r.timer_note = u.timers[k]->note();
    r.launches_per_sample = u.timers[k]->launches_per_sample();
    r.samples_us = u.samples[k];
    r.sample_visits = u.sample_visits[k];
    if (k < u.sample_clock_mhz.size()) r.sample_clock_mhz = u.sample_clock_mhz[k];
    if (k < u.discarded.size()) r.discarded_samples = u.discarded[k];
    if (!floors.empty())
      for (const int visit : r.sample_visits) {
        const auto at = floors.find(visit);
        r.sample_floor_us.push_back(at == floors.end() ? std::numeric_limits<double>::quiet_NaN() : at->second);
      }
    const Summary s = summarize(r.samples_us);
    r.median_us = s.median;
    r.q1_us = s.q1;
    r.q3_us = s.q3;
    r.min_us = s.min;
    r.bytes = u.problem->bytes(u.c);
    r.flops = u.problem->flops(u.c);
    r.gbps = r.bytes / (r.median_us * 1e3);
    r.tflops = r.flops / (r.median_us * 1e6);
    r.check = u.checks[k];
    // What the variant ran (a tile configuration, an autotuner's choice), asked once it has run.
    if (u.variants[k]->plan) {
      const std::string plan = u.variants[k]->plan(u.c);
      if (!plan.empty()) r.plan = nlohmann::json::parse(plan);
    }
    records.push_back(std::move(r));
  }
  return records;
}

nlohmann::json clock_filter_json(const std::vector<Unit>& units, double floor, double warm_mhz, int attempts) {
  nlohmann::json discarded = nlohmann::json::array(), lost = nlohmann::json::array();
  int total = 0;
  for (const Unit& u : units)
    for (std::size_t k = 0; k < u.variants.size(); ++k) {
      if (k >= u.discarded.size() || u.discarded[k] == 0) continue;
      const std::string what = case_label(u.c) + " " + u.cache + " " + u.timer + " " + u.variants[k]->name;
      discarded.push_back({{"record", what}, {"samples", u.discarded[k]}});
      if (u.samples[k].empty()) lost.push_back(what);
      total += u.discarded[k];
    }
  if (total > 0)
    spdlog::warn("clock filter: {} samples discarded (their visit began below {:.0f}% of the warm clock, {:.0f} MHz)",
                 total, 100 * floor, floor * warm_mhz);
  for (const auto& w : lost) spdlog::warn("clock filter: every visit of {} began below the floor: no record", w.get<std::string>());
  return {{"floor_fraction", floor}, {"floor_mhz", floor * warm_mhz}, {"attempts_per_visit", attempts},
          {"discarded_samples", total}, {"discarded", discarded}, {"without_record", lost}};
}

nlohmann::json visit_floors_json(const std::vector<Unit>& units) {
  struct Mode {
    std::string cache, timer;
    std::vector<double> samples, visit_medians;
  };
  std::vector<Mode> modes;
  for (const Unit& u : units) {
    if (u.floor_samples.empty()) continue;
    auto mode = std::find_if(modes.begin(), modes.end(),
                             [&](const Mode& m) { return m.cache == u.cache && m.timer == u.timer; });
    if (mode == modes.end()) mode = modes.insert(modes.end(), Mode{u.cache, u.timer, {}, {}});
    mode->samples.insert(mode->samples.end(), u.floor_samples.begin(), u.floor_samples.end());
    for (const auto& [visit, median] : floor_by_visit(u)) mode->visit_medians.push_back(median);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const Mode& m : modes) {
    const Summary s = summarize(m.samples);
    const auto [lo, hi] = std::minmax_element(m.visit_medians.begin(), m.visit_medians.end());
    out.push_back({{"cache", m.cache}, {"timer", m.timer}, {"visits", m.visit_medians.size()},
                   {"median_us", s.median}, {"q1_us", s.q1}, {"q3_us", s.q3}, {"min_us", s.min},
                   {"visit_median_range_us", {*lo, *hi}}, {"samples_us", m.samples}});
  }
  return out;
}

}  // namespace kbench
