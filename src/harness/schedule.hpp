// The randomized visit schedule. Every measurement unit (a case in one cache mode and timer)
// is visited `visits` times in an order shuffled from a recorded seed; within a visit the
// unit's variants run back to back, in an order shuffled again. A burst of outside load then
// spoils one visit of a few units, not every sample of one unit, and the variants of a visit
// share the GPU's state, so their per-visit ratios pair.
#pragma once

#include <cstdint>
#include <vector>

namespace kbench {

struct Visit {
  std::size_t unit = 0;                      // index of the measurement unit
  int number = 0;                            // 0-based: the how-manyth visit to this unit
  std::vector<std::size_t> variant_order;    // indices into the unit's variants
};

// The optional noise-based stopping rule (off by default: fixed visits x samples). After the
// planned visits, a unit is settled when every variant's median is known to within `target`:
// the relative half-width of the order-statistic interval of its per-visit medians
// (visit_median_halfwidth; the interval's coverage is at least 93.75% from 5 visits on, 75% at
// 3). Units not yet settled, or all units while less than `min_seconds` of visiting has passed,
// get one more visit each, in shuffled rounds, until none is open or each has `max_visits`.
struct StoppingRule {
  double target = 0;       // e.g. 0.01 for 1%; 0: off
  int max_visits = 0;      // the cap per unit (the planned visits included)
  double min_seconds = 0;  // of visiting, before any unit may stop
};

// variants_per_unit[i] = how many variants unit i has.
std::vector<Visit> visit_order(const std::vector<std::size_t>& variants_per_unit, int visits,
                               std::uint64_t seed);

}  // namespace kbench
