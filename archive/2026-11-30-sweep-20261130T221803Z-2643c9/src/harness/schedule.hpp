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

// variants_per_unit[i] = how many variants unit i has.
std::vector<Visit> visit_order(const std::vector<std::size_t>& variants_per_unit, int visits,
                               std::uint64_t seed);

}  // namespace kbench
