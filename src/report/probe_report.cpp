#include "report/probe_report.hpp"

#include <cstdio>
#include <vector>

#include "report/legend.hpp"
#include "report/markdown.hpp"

namespace kbench {
namespace {

using nlohmann::json;

std::string number(const json& j, const char* key, const char* pattern) {
  if (!j.contains(key) || !j[key].is_number()) return "—";
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, j[key].get<double>());
  return buf;
}

// What each column of the probe's table is: its legend is made from these.
const ColumnDefinitions& probe_columns() {
  static const ColumnDefinitions definitions({
      {"pause s", "the idle pause before each series, in seconds"},
      {"series", "how many series were taken after this pause (each a pause, then a window of back-to-back samples)"},
      {"first us", "the median over those series of each one's first sample, in us"},
      {"worst first us", "the greatest first sample of those series, in us"},
      {"first / steady", "first us over the steady time (the median of the second half of every window)"},
      {"first SM MHz", "the median over the series of the SM clock read on the GPU at the first sample"},
      {"first NVML MHz", "the same as NVML reports it; — where it was not read"},
      {"settled ms", "the load, in ms, after which every series of this pause stayed within the tolerance of the "
                     "steady time (a lone sample outside it excepted); never: one had not by the end of its window"},
      {"clock settled ms", "the same for the SM clock against the steady clock"},
      {"within", "the share of all the samples of this pause's series within the tolerance of the steady time"},
  });
  return definitions;
}

}  // namespace

std::string probe_markdown(const json& a) {
  std::string out = "## clock probe\n\n";
  out += "Steady (second half of every window): " + number(a, "steady_us", "%.3f") + " us at " +
         number(a, "steady_sm_mhz", "%.0f") + " MHz. Settled: within " +
         number(a, "tolerance", "%g") + " (a share) of steady from then on.\n\n";
  const std::vector<ShownColumn> header = {{"pause s"},        {"series"},       {"first us"}, {"worst first us"},
                                           {"first / steady"}, {"first SM MHz"}, {"first NVML MHz"},
                                           {"settled ms"},     {"clock settled ms"}, {"within"}};
  const std::string legend = probe_columns().legend(header);
  out += markdown_row(ColumnDefinitions::titles(header)) + markdown_row(std::vector<std::string>(header.size(), "---"));
  if (a.contains("pauses"))
    for (const auto& p : a["pauses"])
      out += markdown_row({number(p, "pause_s", "%g"), number(p, "repetitions", "%.0f"), number(p, "first_us", "%.3f"),
                  number(p, "first_us_max", "%.3f"), number(p, "first_slowdown", "%.2fx"),
                  number(p, "first_sm_mhz", "%.0f"), number(p, "first_nvml_mhz", "%.0f"),
                  p.contains("settle_ms") && p["settle_ms"].is_null() ? "never" : number(p, "settle_ms", "%.1f"),
                  p.contains("clock_settle_ms") && p["clock_settle_ms"].is_null() ? "never"
                                                                                  : number(p, "clock_settle_ms", "%.1f"),
                  number(p, "share_within", "%.3f")});
  out += "\nColumns:\n\n" + legend + "\n";
  if (a.contains("statement") && a["statement"].is_string()) out += a["statement"].get<std::string>() + "\n";
  return out + "\n";
}

}  // namespace kbench
