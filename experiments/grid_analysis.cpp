#include "experiments/grid_analysis.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/shape.hpp"
#include "core/stats.hpp"
#include "experiments/sweep_config.hpp"
#include "kernels/rows/row_plan.hpp"

namespace kbench {

namespace {

std::string cell_name(const std::string& dtype, std::int64_t rows, std::int64_t width) {
  return dtype + " " + std::to_string(rows) + "x" + std::to_string(width);
}

// extra.grid is read as strictly as a config: a result edited by hand (a cell's rows "4" or
// 1.5, 0 SMs, which row_plan divides by) is one line of bad input, not a crash or a fit on
// numbers that were never measured.
const std::string kWhere = "grid result: extra.grid";

std::string text(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) return "";
  if (!it->is_string()) throw UsageError(where + "." + key + " must be a string, got " + it->dump());
  return it->get<std::string>();
}

template <class T>
T whole(const nlohmann::json& j, const char* key, const std::string& where, T fallback, std::int64_t lo, std::int64_t hi) {
  return static_cast<T>(whole_field(j, key, where, fallback, lo, hi));
}

DeviceLimits device_limits(const nlohmann::json& g) {
  DeviceLimits dev;
  const auto it = g.find("device_limits");
  if (it == g.end()) return dev;
  const std::string where = kWhere + ".device_limits";
  if (!it->is_object()) throw UsageError(where + " must be an object");
  constexpr std::int64_t kInt = std::numeric_limits<int>::max(), kI64 = std::numeric_limits<std::int64_t>::max();
  dev.sms = whole(*it, "sms", where, dev.sms, 1, 1 << 16);
  dev.max_threads_per_sm = whole(*it, "max_threads_per_sm", where, dev.max_threads_per_sm, 1, 1 << 16);
  dev.l2_bytes = whole(*it, "l2_bytes", where, dev.l2_bytes, 0, kI64);
  dev.max_grid_x = whole(*it, "max_grid_x", where, dev.max_grid_x, 1, kI64);
  dev.max_grid_y = whole(*it, "max_grid_y", where, dev.max_grid_y, 1, kInt);
  return dev;
}

GridTimes grid_cell(const nlohmann::json& c, std::size_t i) {
  const std::string where = kWhere + ".cells[" + std::to_string(i) + "]";
  if (!c.is_object()) throw UsageError(where + " must be an object, got " + c.dump());
  if (!c.contains("rows") || !c.contains("width")) throw UsageError(where + " needs its rows and width");
  GridTimes t{text(c, "dtype", where), whole(c, "rows", where, std::int64_t{0}, 1, kMaxDim),
              whole(c, "width", where, std::int64_t{0}, 1, rows::kMaxWidth), {}, text(c, "rule", where)};
  parse_dtype(t.dtype);  // the fit's rules read it
  return t;
}

}  // namespace

GridData grid_data(const Result& r) {
  const auto g = r.extra.find("grid");
  if (r.experiment != "grid" || g == r.extra.end() || !g->is_object() || !g->contains("cells"))
    throw UsageError("not a grid result (experiment '" + r.experiment + "', no extra.grid)");
  if (!g->at("cells").is_array()) throw UsageError(kWhere + ".cells must be a list");
  GridData d;
  d.op = text(*g, "op", kWhere);
  d.dev = device_limits(*g);
  d.cache = text(*g, "cache", kWhere);
  d.timer = text(*g, "timer", kWhere);
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::size_t> index;
  for (const auto& c : g->at("cells")) {
    GridTimes t = grid_cell(c, d.cells.size());
    if (!index.emplace(std::tuple{t.dtype, t.rows, t.width}, d.cells.size()).second)
      throw UsageError(kWhere + ".cells holds " + cell_name(t.dtype, t.rows, t.width) + " twice");
    d.cells.push_back(std::move(t));
  }
  for (const Record& rec : r.records) {
    if (rec.op != d.op || rec.shape.size() != 2 || !rec.check.passed || rec.samples_us.empty()) continue;
    if ((!d.cache.empty() && rec.cache != d.cache) || (!d.timer.empty() && rec.timer != d.timer)) continue;
    const auto it = index.find({rec.dtype, rec.shape[0], rec.shape[1]});
    if (it != index.end()) d.cells[it->second].plan_us[rec.variant] = rec.median_us;
  }
  std::erase_if(d.cells, [](const GridTimes& t) { return t.plan_us.empty(); });
  if (d.cells.empty()) throw UsageError("grid result of '" + d.op + "' has no cells with a timed plan");
  return d;
}

RegretSummary regret_of(const std::vector<GridTimes>& cells, const PlanChooser& choose) {
  RegretSummary s;
  std::vector<double> regrets;
  for (const GridTimes& c : cells) {
    const auto best = std::min_element(c.plan_us.begin(), c.plan_us.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    const std::string choice = choose(c);
    const auto it = c.plan_us.find(choice);
    if (it == c.plan_us.end()) {
      s.untimed.push_back(cell_name(c.dtype, c.rows, c.width) + ": " + choice);
      continue;
    }
    const double regret = it->second / best->second - 1;
    regrets.push_back(regret);
    s.off += regret > kOffRegret;
    s.per_cell.push_back({c.dtype, c.rows, c.width, best->first, choice, best->second, it->second, regret});
  }
  s.cells = static_cast<int>(regrets.size());
  if (!regrets.empty()) {
    double sum = 0;
    for (const double x : regrets) sum += x;
    s.mean = sum / static_cast<double>(regrets.size());
    s.p95 = quantile(regrets, 0.95);
  }
  return s;
}

nlohmann::json summary_json(const RegretSummary& s, bool per_cell) {
  nlohmann::json j = {{"cells", s.cells}, {"mean_regret", s.mean}, {"p95_regret", s.p95},
                      {"cells_off", s.off}, {"off_threshold", kOffRegret}, {"untimed", s.untimed}};
  if (per_cell) {
    nlohmann::json list = nlohmann::json::array();
    for (const CellRegret& c : s.per_cell)
      list.push_back({{"dtype", c.dtype}, {"rows", c.rows}, {"width", c.width}, {"best", c.best},
                      {"best_us", c.best_us}, {"choice", c.choice}, {"choice_us", c.choice_us}, {"regret", c.regret}});
    j["per_cell"] = list;
  }
  return j;
}

nlohmann::json off_cells_json(const RegretSummary& s) {
  std::vector<CellRegret> off;
  for (const CellRegret& c : s.per_cell)
    if (c.regret > kOffRegret) off.push_back(c);
  std::sort(off.begin(), off.end(), [](const CellRegret& a, const CellRegret& b) { return a.regret > b.regret; });
  nlohmann::json list = nlohmann::json::array();
  for (const CellRegret& c : off)
    list.push_back(cell_name(c.dtype, c.rows, c.width) + ": " + c.choice + " " + std::to_string(c.choice_us) +
                   " us against " + c.best + " " + std::to_string(c.best_us));
  return list;
}

nlohmann::json grid_analysis(const Result& r) {
  const GridData d = grid_data(r);
  const RegretSummary s = regret_of(d.cells, [](const GridTimes& c) { return c.rule; });
  nlohmann::json j = summary_json(s, true);
  j["off_cells"] = off_cells_json(s);
  j["op"] = d.op;
  return j;
}

}  // namespace kbench
