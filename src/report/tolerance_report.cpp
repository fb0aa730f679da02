#include "report/tolerance_report.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace kbench {

namespace {

using nlohmann::json;

// A whole number of the block that fits an int, or 0: a report shows what a file holds and
// never throws on it (nor converts 1e50 to int, which is undefined).
int int_field(const json& block, const char* key) {
  const auto it = block.find(key);
  if (it == block.end() || !it->is_number_integer()) return 0;
  const double v = it->get<double>();
  return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max() ? static_cast<int>(v) : 0;
}

double share_field(const json& block) {
  const auto it = block.find("share");
  if (it != block.end() && it->is_null()) return std::numeric_limits<double>::infinity();
  return it != block.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

std::string share_where(const ShareRow& row) {
  return "inputs=" + row.inputs + " " + shape_string(row.shape) + " seed " + std::to_string(row.seed);
}

std::vector<const ShareRow*> worst_per_dtype(const std::vector<ShareRow>& rows) {
  std::vector<const ShareRow*> worst;
  for (const ShareRow& r : rows) {
    const auto it = std::find_if(worst.begin(), worst.end(),
                                 [&](const ShareRow* w) { return w->op == r.op && w->dtype == r.dtype; });
    if (it == worst.end()) worst.push_back(&r);
    else if (r.share > (*it)->share) *it = &r;
  }
  return worst;
}

std::string worst_line(const ShareRow& row) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %s: worst %.3g of its tolerance (%s, %s)", row.op.c_str(), row.dtype.c_str(),
                row.share, row.variant.c_str(), share_where(row).c_str());
  return buf;
}

std::vector<std::string> share_lines(const std::vector<ShareRow>& rows) {
  std::vector<std::string> lines;
  char buf[256];
  for (const ShareRow& r : rows) {
    std::snprintf(buf, sizeof buf, "%-4s %-18s %-9s %-14s worst %8.3g of its tolerance at %s (%d checks)",
                  r.share <= 1 ? "ok" : "FAIL", r.op.c_str(), r.dtype.c_str(), r.variant.c_str(), r.share,
                  share_where(r).c_str(), r.checks);
    lines.push_back(std::string(buf) + (r.detail.empty() ? "" : ": " + r.detail));
  }
  for (const ShareRow* w : worst_per_dtype(rows)) lines.push_back(worst_line(*w));
  return lines;
}

std::vector<ShareRow> share_rows_from_records(const std::vector<Record>& records) {
  std::vector<ShareRow> rows;
  for (const Record& r : records) {
    if (!r.tolerance_probe.is_object()) continue;
    const json& b = r.tolerance_probe;
    const auto inputs = b.find("inputs");
    rows.push_back(ShareRow{r.op, r.dtype, r.variant, share_field(b),
                            inputs != b.end() && inputs->is_string() ? inputs->get<std::string>() : "?", r.shape,
                            int_field(b, "seed"), int_field(b, "checks"), r.check.detail});
  }
  return rows;
}

std::string tolerance_markdown(const Result& result) {
  std::string out = "## tolerance probe\n\n";
  const std::vector<ShareRow> rows = share_rows_from_records(result.records);
  if (rows.empty()) return out + "No tolerance probe records in the file.\n\n";
  out += "Each variant's worst error as a share of its tolerance, |out - ref| / (atol + rtol |ref|), over its "
         "checks (above 1 the check fails)";
  const json& settings = result.meta.contains("settings") ? result.meta["settings"] : json();
  if (settings.is_object() && settings.contains("seeds") && settings["seeds"].is_number_integer())
    out += ": " + std::to_string(settings["seeds"].get<long long>()) + " seeds of every input kind per shape";
  out += ".\n\n```\n";
  for (const std::string& line : share_lines(rows)) out += line + "\n";
  return out + "```\n\n";
}

}  // namespace kbench
