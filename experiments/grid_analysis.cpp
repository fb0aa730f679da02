#include "experiments/grid_analysis.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/errors.hpp"
#include "core/stats.hpp"

namespace kbench {

namespace {

std::string cell_name(const std::string& dtype, std::int64_t rows, std::int64_t width) {
  return dtype + " " + std::to_string(rows) + "x" + std::to_string(width);
}

template <class T>
T limit(const nlohmann::json& j, const char* key, T fallback) {
  return j.contains(key) && j.at(key).is_number() ? j.at(key).get<T>() : fallback;
}

}  // namespace

GridData grid_data(const Result& r) {
  const auto g = r.extra.find("grid");
  if (r.experiment != "grid" || g == r.extra.end() || !g->is_object() || !g->contains("cells"))
    throw UsageError("not a grid result (experiment '" + r.experiment + "', no extra.grid)");
  GridData d;
  d.op = g->value("op", "");
  const nlohmann::json lim = g->value("device_limits", nlohmann::json::object());
  d.dev.sms = limit(lim, "sms", d.dev.sms);
  d.dev.max_threads_per_sm = limit(lim, "max_threads_per_sm", d.dev.max_threads_per_sm);
  d.dev.l2_bytes = limit(lim, "l2_bytes", d.dev.l2_bytes);
  d.dev.max_grid_x = limit(lim, "max_grid_x", d.dev.max_grid_x);
  const std::string cache = g->value("cache", ""), timer = g->value("timer", "");
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::size_t> index;
  for (const auto& c : g->at("cells")) {
    GridTimes t{c.value("dtype", ""), c.value("rows", std::int64_t{0}), c.value("width", std::int64_t{0}), {},
                c.value("rule", "")};
    index[{t.dtype, t.rows, t.width}] = d.cells.size();
    d.cells.push_back(std::move(t));
  }
  for (const Record& rec : r.records) {
    if (rec.op != d.op || rec.shape.size() != 2 || !rec.check.passed || rec.samples_us.empty()) continue;
    if ((!cache.empty() && rec.cache != cache) || (!timer.empty() && rec.timer != timer)) continue;
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
