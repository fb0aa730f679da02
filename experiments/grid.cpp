#include "experiments/grid.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <set>

#include "core/errors.hpp"
#include "experiments/grid_analysis.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/rows/row_family.hpp"

namespace kbench {

namespace {

nlohmann::json plan_json(const rows::RowPlan& p) {
  return {{"kind", rows::kind_name(p.kind)}, {"threads", p.threads}, {"lanes", p.lanes},   {"vecs", p.vecs},
          {"chunk", p.chunk},                {"segments", p.segments}, {"segment", p.segment}, {"blocks", p.blocks}};
}

std::string cell_key(const std::string& dtype, std::int64_t rows, std::int64_t width) {
  return dtype + " " + std::to_string(rows) + "x" + std::to_string(width);
}

nlohmann::json settings_json(const GridSettings& s, const DeviceLimits& dev) {
  nlohmann::json dts = nlohmann::json::array();
  for (const DType d : s.dtypes) dts.push_back(std::string(dtype_name(d)));
  return {{"config", s.config_path},        {"description", s.description},
          {"op", s.op},                     {"dtypes", dts},
          {"rows", grid_row_counts(s, dev)}, {"rows_given", s.rows},
          {"rows_per_sm", s.rows_per_sm},   {"widths", s.widths},
          {"max_elements", s.max_elements}, {"check_full_up_to_elements", s.check_full_up_to},
          {"check_sample_rows", s.check_sample_rows},
          {"cache", s.caches},              {"timer", s.timers},
          {"visits", s.visits},             {"samples", s.samples},
          {"device", s.device}};
}

}  // namespace

std::uint64_t check_seed(std::uint64_t seed, std::int64_t rows, std::int64_t width) {
  return seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(rows)) ^
         (0xc2b2ae3d27d4eb4fULL * static_cast<std::uint64_t>(width));
}

std::vector<std::int64_t> grid_row_counts(const GridSettings& s, const DeviceLimits& dev) {
  std::set<std::int64_t> out(s.rows.begin(), s.rows.end());
  for (const double m : s.rows_per_sm) out.insert(std::max<std::int64_t>(1, std::llround(m * dev.sms)));
  return {out.begin(), out.end()};
}

std::vector<GridCell> grid_cells(const GridSettings& s, const DeviceLimits& dev, std::vector<std::string>* left_out) {
  validate_grid_settings(s);
  const rows::RowRules& rules = rows::row_rules(s.op);
  std::set<std::int64_t> widths(s.widths.begin(), s.widths.end());
  std::vector<GridCell> cells;
  for (const DType dt : s.dtypes)
    for (const std::int64_t r : grid_row_counts(s, dev))
      for (const std::int64_t w : widths) {
        if (r * w > s.max_elements) {
          if (left_out) left_out->push_back(cell_key(std::string(dtype_name(dt)), r, w));
          continue;
        }
        GridCell c{dt, r, w, rows::grid_plans(r, w, dt, dev, rules), rows::grid_plan_name(rows::row_plan(r, w, dt, dev, rules), rules), {}};
        if (r * w > s.check_full_up_to) c.check_rows = sample_rows(r, s.check_sample_rows, check_seed(s.seed, r, w));
        cells.push_back(std::move(c));
      }
  if (cells.empty()) throw UsageError("grid: no cells (every row count x width is above max_elements)");
  return cells;
}

Experiment grid_experiment(const GridSettings& s, const DeviceLimits& dev) {
  std::vector<std::string> left_out;
  const std::vector<GridCell> cells = grid_cells(s, dev, &left_out);
  const Op& op = registry().op(s.op);
  Experiment e;
  e.name = "grid";
  e.sources = {"experiments/grid"};  // grid.*, grid_config.*, grid_analysis.*
  e.settings = settings_json(s, dev);
  e.how = Measurement{s.caches, s.timers, s.visits, s.samples, s.seed, s.device};
  // The cases point at their plans' Launchables; the analysis callback owns them, so they live
  // as long as the experiment does.
  auto owned = std::make_shared<std::deque<Launchable>>();
  auto params = std::make_shared<std::map<std::string, nlohmann::json>>();  // cell key + plan name -> plan
  nlohmann::json cell_list = nlohmann::json::array();
  for (const GridCell& c : cells) {
    MeasuredCase mc{&op, make_case(op, c.dtype, {c.rows, c.width}), {}, {}, c.check_rows};
    for (const rows::RowPlan& p : c.plans) {
      owned->push_back(rows::plan_launchable(s.op, p));
      mc.variants.push_back(&owned->back());
      (*params)[cell_key(std::string(dtype_name(c.dtype)), c.rows, c.width) + " " + owned->back().name] = plan_json(p);
    }
    cell_list.push_back({{"dtype", std::string(dtype_name(c.dtype))}, {"rows", c.rows}, {"width", c.width}, {"rule", c.rule},
                         {"plans", c.plans.size()},
                         {"checked_rows", c.check_rows.empty() ? c.rows : static_cast<std::int64_t>(c.check_rows.size())}});
    e.cases.push_back(std::move(mc));
  }
  const nlohmann::json grid = {
      {"op", s.op},
      {"device_limits", {{"sms", dev.sms}, {"max_threads_per_sm", dev.max_threads_per_sm}, {"l2_bytes", dev.l2_bytes},
                         {"max_grid_x", dev.max_grid_x}}},
      {"cache", s.caches.front()},
      {"timer", s.timers.front()},
      {"cells", cell_list},
      {"left_out", left_out}};
  e.analyse = [owned, params, grid](Result& r) {
    for (Record& rec : r.records) {
      const auto it = params->find(cell_key(rec.dtype, rec.shape.at(0), rec.shape.at(1)) + " " + rec.variant);
      if (it != params->end()) rec.plan = it->second;
    }
    r.extra["grid"] = grid;
    grid_reanalysis(r);
  };
  return e;
}

void grid_reanalysis(Result& r) { r.extra["grid"]["analysis"] = grid_analysis(r); }

}  // namespace kbench
