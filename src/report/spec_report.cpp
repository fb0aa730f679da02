#include "report/spec_report.hpp"

#include <set>
#include <vector>

#include "core/shape.hpp"
#include "core/text.hpp"
#include "report/legend.hpp"
#include "report/markdown.hpp"

namespace kbench {
namespace {

using nlohmann::json;

constexpr const char* kBuilds[] = {"runtime", "template_vecs", "template_width"};

// "5.73 us, 40 regs, 0 B local, 2 blocks/SM" or "—".
std::string build_cell(const json& builds, const char* name) {
  if (!builds.contains(name)) return "—";
  const json& b = builds[name];
  std::string text = format_number("%.2f us", b.value("median_us", 0.0));
  if (b.contains("attributes")) {
    const json& a = b["attributes"];
    text += ", " + format_number("%g regs", a.value("registers", 0.0)) + ", " + format_number("%g B local", a.value("local_bytes", 0.0)) +
            ", " + format_number("%g blocks/SM", a.value("blocks_per_sm", 0.0));
  }
  return text;
}

std::string comparison_cell(const json& comparisons, const char* build, const char* against) {
  for (const auto& c : comparisons)
    if (c.value("build", "") == build && c.value("against", "") == against) {
      const std::string v = c.value("verdict", "");
      return format_number("%.2fx", c.value("speedup", 0.0)) + (v == "pays" || v == "costs" ? " " + v : "");
    }
  return "—";
}

// What each column of a spec table is: its legend is made from these.
const ColumnDefinitions& spec_columns() {
  static const ColumnDefinitions definitions({
      {"shape", "the case's shape (rows x columns)"},
      {"dtype", "the element type of the inputs and outputs"},
      {"cache", "cold: L2 flushed or the inputs rotated before each sample; warm: the inputs left in L2 by the "
                "sample before"},
      {"timer", "events: a CUDA event pair around each launch; graph: launches replayed from one CUDA graph, per "
                "launch; cupti: the kernels' own time from CUPTI's activity records"},
      {"runtime", "the build with nothing fixed at compile time (width, lanes and vectors per thread are arguments): "
                  "its median in us, then its kernel's registers per thread, local memory per thread (spills) and the "
                  "blocks per SM the CUDA runtime allows at the plan's block size"},
      {"template_vecs", "the build with the vectors per thread fixed at compile time, shown as runtime's"},
      {"template_width", "the build with the row width fixed at compile time as well, shown as runtime's"},
      {"vecs vs runtime", "the median of the per-visit ratios of runtime's time over template_vecs' (above 1: "
                          "template_vecs is faster), with pays or costs where the difference passes the threshold and "
                          "its interval excludes 1"},
      {"width vs runtime", "the same for template_width against runtime"},
      {"width vs vecs", "the same for template_width against template_vecs"},
  });
  return definitions;
}

}  // namespace

std::string spec_markdown(const json& a) {
  std::string out = "## spec: compile-time specialisation\n\n";
  out += "Each build's median, then its kernel's registers per thread, local memory per thread (spills) and the "
         "blocks per SM the CUDA runtime allows at the plan's block size. Ratios are per-visit medians, the "
         "reference's time over the build's (above 1: the build is faster); \"pays\" or \"costs\" where the "
         "difference passes " +
         format_number("%g", 100 * a.value("threshold", 0.0)) + "% and its interval excludes 1.\n\n";
  std::set<std::string> ops;
  if (a.contains("cells"))
    for (const auto& c : a["cells"]) ops.insert(c.value("op", ""));
  for (const auto& op : ops) {
    out += "### " + op + "\n\n";
    const std::vector<ShownColumn> header = {{"shape"},        {"dtype"},          {"cache"},         {"timer"},
                                             {"runtime"},      {"template_vecs"},  {"template_width"}, {"vecs vs runtime"},
                                             {"width vs runtime"}, {"width vs vecs"}};
    const std::string legend = spec_columns().legend(header);
    out += markdown_row(ColumnDefinitions::titles(header)) + markdown_row(std::vector<std::string>(header.size(), "---"));
    for (const auto& c : a["cells"]) {
      if (c.value("op", "") != op) continue;
      const json& builds = c.contains("builds") ? c["builds"] : json::object();
      const json& cmp = c.contains("comparisons") ? c["comparisons"] : json::array();
      std::vector<std::string> cells = {shape_string(c.value("shape", Shape{})), c.value("dtype", ""),
                                        c.value("cache", ""), c.value("timer", "")};
      for (const char* b : kBuilds) cells.push_back(build_cell(builds, b));
      cells.push_back(comparison_cell(cmp, "template_vecs", "runtime"));
      cells.push_back(comparison_cell(cmp, "template_width", "runtime"));
      cells.push_back(comparison_cell(cmp, "template_width", "template_vecs"));
      out += markdown_row(cells);
    }
    out += "\nColumns:\n\n" + legend + "\n";
  }
  if (a.contains("statements"))
    for (const auto& s : a["statements"]) out += s.value("text", "") + "\n\n";
  return out;
}

}  // namespace kbench
