// Grid results made by hand, for the tests of the grid's analysis, the fit and the bad-input
// corpus (fit on grids of different devices, ops or cells): no kernel runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/device_limits.hpp"
#include "experiments/grid_analysis.hpp"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_plan.hpp"
#include "record/result.hpp"

namespace kbench::test {

inline const DeviceLimits kH200 = kH200Limits;  // src/device/device_limits.hpp

// A grid result of `op` made by hand: every plan of grid_plans at each cell, timed by `us`.
using PlanTime = std::function<double(std::int64_t rows, std::int64_t width, const rows::RowPlan&)>;
inline Result synthetic_grid(const std::string& op, const std::vector<std::int64_t>& row_counts,
                             const std::vector<std::int64_t>& widths, const PlanTime& us, const std::string& started,
                             const std::string& device = "NVIDIA H200") {
  Result r;
  r.experiment = "grid";
  r.meta["started"] = started;
  r.device = {{"name", device}, {"sms", 132}};
  nlohmann::json cells = nlohmann::json::array();
  const rows::RowRules& rules = rows::row_rules(op);
  for (const auto rc : row_counts)
    for (const auto w : widths) {
      cells.push_back({{"dtype", "bfloat16"}, {"rows", rc}, {"width", w},
                       {"rule", rows::grid_plan_name(rows::row_plan(rc, w, DType::bf16, kH200, rules), rules)}});
      for (const auto& p : rows::grid_plans(rc, w, DType::bf16, kH200, rules)) {
        Record rec;
        rec.op = op;
        rec.variant = rows::grid_plan_name(p, rules);
        rec.dtype = "bfloat16";
        rec.shape = {rc, w};
        rec.cache = "warm";
        rec.timer = "graph";
        rec.median_us = us(rc, w, p);
        rec.samples_us = {rec.median_us};
        rec.check.passed = true;
        r.records.push_back(rec);
      }
    }
  r.extra["grid"] = {{"op", op},
                     {"device_limits", {{"sms", 132}, {"max_threads_per_sm", 2048}, {"l2_bytes", 50 << 20}}},
                     {"cache", "warm"},
                     {"timer", "graph"},
                     {"cells", cells}};
  r.extra["grid"]["analysis"] = grid_analysis(r);
  return r;
}

}  // namespace kbench::test
