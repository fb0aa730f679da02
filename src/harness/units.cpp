#include "harness/units.hpp"

#include "harness/schedule.hpp"
#include "core/stats.hpp"

namespace kbench {

void time_units(std::vector<Unit>& units, int visits, int samples, std::uint64_t seed,
                const VisitProgress& progress) {
  std::vector<std::size_t> sizes;
  for (Unit& u : units) {
    sizes.push_back(u.timers.size());
    u.samples.assign(u.timers.size(), {});
    u.sample_visits.assign(u.timers.size(), {});
  }
  const std::vector<Visit> order = visit_order(sizes, visits, seed);
  for (std::size_t i = 0; i < order.size(); ++i) {
    Unit& u = units[order[i].unit];
    for (std::size_t k : order[i].variant_order)
      for (int n = 0; n < samples; ++n) {
        u.samples[k].push_back(u.timers[k]->sample_us());
        u.sample_visits[k].push_back(order[i].number);
      }
    if (progress) progress(i + 1, order.size(), u);
  }
}

std::vector<Record> unit_records(const Unit& u) {
  std::vector<Record> records;
  for (std::size_t k = 0; k < u.variants.size(); ++k) {
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

}  // namespace kbench
