#include "report/probe_report.hpp"

#include <cstdio>
#include <vector>

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

}  // namespace

std::string probe_markdown(const json& a) {
  std::string out = "## clock probe\n\n";
  out += "Steady (second half of every window): " + number(a, "steady_us", "%.3f") + " us at " +
         number(a, "steady_sm_mhz", "%.0f") + " MHz. Settled: within " +
         number(a, "tolerance", "%g") + " (a share) of steady from then on.\n\n";
  const std::vector<std::string> header = {"pause s",        "series",       "first us", "worst first us",
                                           "first / steady", "first SM MHz", "first NVML MHz",
                                           "settled ms",     "clock settled ms", "within"};
  out += markdown_row(header) + markdown_row(std::vector<std::string>(header.size(), "---"));
  if (a.contains("pauses"))
    for (const auto& p : a["pauses"])
      out += markdown_row({number(p, "pause_s", "%g"), number(p, "repetitions", "%.0f"), number(p, "first_us", "%.3f"),
                  number(p, "first_us_max", "%.3f"), number(p, "first_slowdown", "%.2fx"),
                  number(p, "first_sm_mhz", "%.0f"), number(p, "first_nvml_mhz", "%.0f"),
                  p.contains("settle_ms") && p["settle_ms"].is_null() ? "never" : number(p, "settle_ms", "%.1f"),
                  p.contains("clock_settle_ms") && p["clock_settle_ms"].is_null() ? "never"
                                                                                  : number(p, "clock_settle_ms", "%.1f"),
                  number(p, "share_within", "%.3f")});
  out += "\n";
  if (a.contains("statement") && a["statement"].is_string()) out += a["statement"].get<std::string>() + "\n";
  return out + "\n";
}

}  // namespace kbench
