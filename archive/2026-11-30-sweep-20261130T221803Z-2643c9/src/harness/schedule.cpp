#include "harness/schedule.hpp"

#include <numeric>

#include "core/rng.hpp"

namespace kbench {

std::vector<Visit> visit_order(const std::vector<std::size_t>& variants_per_unit, int visits,
                               std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Visit> order;
  for (std::size_t unit = 0; unit < variants_per_unit.size(); ++unit)
    for (int v = 0; v < visits; ++v) order.push_back(Visit{unit, 0, {}});
  rng.shuffle(order);
  // Number the visits of each unit in the order they happen.
  std::vector<int> seen(variants_per_unit.size(), 0);
  for (auto& visit : order) {
    visit.number = seen[visit.unit]++;
    visit.variant_order.resize(variants_per_unit[visit.unit]);
    std::iota(visit.variant_order.begin(), visit.variant_order.end(), std::size_t{0});
    rng.shuffle(visit.variant_order);
  }
  return order;
}

}  // namespace kbench
