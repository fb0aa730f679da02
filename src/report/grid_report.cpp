#include "report/grid_report.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "report/legend.hpp"
#include "report/markdown.hpp"

namespace kbench {

namespace {

using nlohmann::json;

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * x);
  return buf;
}

std::string us(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x < 10 ? "%.2f" : x < 1000 ? "%.1f" : "%.0f", x);
  return buf;
}

std::string summary_line(const json& s) {
  return "mean regret " + percent(s.value("mean_regret", 0.0)) + ", 95th percentile " +
         percent(s.value("p95_regret", 0.0)) + ", " + std::to_string(s.value("cells_off", 0)) + " of " +
         std::to_string(s.value("cells", 0)) + " cells more than " + percent(s.value("off_threshold", 0.1)) + " off" +
         (s.contains("untimed") && !s["untimed"].empty()
              ? " (" + std::to_string(s["untimed"].size()) + " cells where the choice was not timed)"
              : "");
}

std::string thresholds(const json& t) {
  std::string out;
  for (auto it = t.begin(); it != t.end(); ++it) out += (out.empty() ? "" : ", ") + it.key() + " " + it.value().dump();
  return out;
}

// What each column of the grid's table is: its legend is made from these.
const ColumnDefinitions& grid_columns() {
  static const ColumnDefinitions definitions({
      {"dtype", "the element type of the cell"},
      {"rows", "the rows of the cell's shape"},
      {"width", "the elements per row of the cell's shape"},
      {"best plan", "the plan with the least median of those timed at the cell that passed their check"},
      {"best us", "that plan's median, in us"},
      {"rule's plan", "the plan the current rule (row_plan) chooses for the cell"},
      {"rule us", "that plan's median at the cell, in us"},
      {"regret", "rule us over best us, minus 1, as a percentage: what the rule's choice costs at the cell"},
  });
  return definitions;
}

}  // namespace

std::string grid_markdown(const json& a) {
  std::string out = "## grid: " + markdown_text(a.value("op", std::string("?"))) + "\n\nThe current rule: " + summary_line(a) +
                    ". Regret: the rule's median over the best plan's, minus 1.\n\n";
  const std::vector<ShownColumn> columns = {{"dtype"},       {"rows"},    {"width"},   {"best plan"},
                                            {"best us"},     {"rule's plan"}, {"rule us"}, {"regret"}};
  const std::string legend = grid_columns().legend(columns);
  out += markdown_row(ColumnDefinitions::titles(columns));
  out += markdown_row(std::vector<std::string>(columns.size(), "---"));
  for (const auto& c : a.value("per_cell", json::array()))
    out += markdown_row({c.value("dtype", ""), std::to_string(c.value("rows", 0)), std::to_string(c.value("width", 0)),
                         c.value("best", ""), us(c.value("best_us", 0.0)), c.value("choice", ""),
                         us(c.value("choice_us", 0.0)), percent(c.value("regret", 0.0))});
  out += "\nColumns:\n\n" + legend;
  const json off = a.value("off_cells", json::array());
  out += "\nCells more than 10% off: " + (off.empty() ? std::string("none") : std::to_string(off.size())) + "\n";
  for (const auto& line : off) out += "- " + line.get<std::string>() + "\n";
  for (const auto& line : a.value("untimed", json::array()))
    out += "- choice not timed (its check failed): " + line.get<std::string>() + "\n";
  return out + "\nHeatmap: `python3 scripts/plot_grid.py FILE.json` (regret per cell, rows x widths).\n\n";
}

std::string fit_markdown(const json& f) {
  const json cur = f.value("current", json::object());
  std::string out = "## fit: " + f.value("op", std::string("?")) + " (" + std::to_string(f.value("candidates", 0)) +
                    " candidate rules)\n\n";
  out += "Current thresholds: " + thresholds(cur.value("thresholds", json::object())) + ".\n";
  std::string kept;
  for (const auto& k : f.value("held", json::array())) kept += (kept.empty() ? "" : ", ") + k.get<std::string>();
  std::string set;
  for (const auto& [name, value] : f.value("set", json::object()).items())
    set += (set.empty() ? "" : ", ") + name + " = " + value.dump();
  if (!kept.empty()) out += "Held at their current values: " + kept + ".\n";
  if (!set.empty()) out += "Held at the values given (--set): " + set + ".\n";
  out += "\n";
  out += "- current rule on A (" + f.value("a", "") + "): " + summary_line(cur.value("a", json::object())) + "\n";
  out += "- current rule on B (" + f.value("b", "") + "): " + summary_line(cur.value("b", json::object())) + "\n";
  out += "- noise (the current rule's A-vs-B difference in mean regret): " + percent(f.value("noise", 0.0)) + "\n\n";
  for (const char* key : {"a_to_b", "b_to_a"}) {
    const json d = f.value(key, json::object());
    out += "Fitted on " + d.value("fitted_on", "") + ": " + thresholds(d.value("thresholds", json::object())) + "\n";
    out += "- on the run it was fitted on: " + summary_line(d.value("regret_on_fit_run", json::object())) + "\n";
    out += "- held out (" + d.value("judged_on", "") + "): " + summary_line(d.value("held_out", json::object())) + "\n";
    out += "- current rule there: " + summary_line(d.value("current_on_held_out", json::object())) + "; gain " +
           percent(d.value("gain", 0.0)) + (d.value("beats_current_by_more_than_noise", false) ? ", beyond" : ", within") +
           " the noise\n\n";
  }
  const json dec = f.value("decision", json::object());
  out += std::string("Decision: ") + (dec.value("adopt", false) ? "adopt" : "keep the current rule") + ": " +
         dec.value("why", "") + ".\nThresholds: " + thresholds(dec.value("thresholds", json::object())) + ".\n";
  const json held = dec.value("held_out", json::object());
  out += "Held out: " + summary_line(held) + "; goal (mean <= 2%, at most 10 cells off) " +
         (held.value("meets_goal", false) ? "met" : "not met") + ".\n";
  const json off = held.value("off_cells", json::array());
  if (!off.empty()) out += "\nHeld-out cells more than 10% off under these thresholds:\n";
  for (const auto& line : off) out += "- " + line.get<std::string>() + "\n";
  return out + "\n";
}

}  // namespace kbench
