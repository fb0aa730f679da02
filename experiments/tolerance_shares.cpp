#include "experiments/tolerance_shares.hpp"

#include <algorithm>
#include <cstdio>

namespace kbench {

namespace {

bool same_row(const ProbeCheck& a, const ProbeCheck& b) {
  return a.op == b.op && a.dtype == b.dtype && a.variant == b.variant;
}

// "inputs=large 5x8193 seed 17"
std::string where(const ProbeCheck& c) {
  return "inputs=" + std::string(input_kind_name(c.kind)) + " " + shape_string(c.shape) + " seed " +
         std::to_string(c.seed);
}

}  // namespace

void ShareTable::add(const ProbeCheck& check) {
  const auto row = std::find_if(rows_.begin(), rows_.end(), [&](const WorstShare& w) { return same_row(w.worst, check); });
  if (row == rows_.end()) {
    rows_.push_back(WorstShare{check, 1});
    return;
  }
  ++row->checks;
  if (check.share > row->worst.share) row->worst = check;
}

bool ShareTable::all_within() const {
  return std::all_of(rows_.begin(), rows_.end(), [](const WorstShare& w) { return w.worst.share <= 1; });
}

std::vector<std::string> share_report(const ShareTable& table) {
  std::vector<std::string> lines;
  char buf[256];
  for (const WorstShare& w : table.rows()) {
    const ProbeCheck& c = w.worst;
    std::snprintf(buf, sizeof buf, "%-4s %-18s %-9s %-14s worst %8.3g of its tolerance at %s (%d checks)",
                  c.share <= 1 ? "ok" : "FAIL", c.op.c_str(), std::string(dtype_name(c.dtype)).c_str(),
                  c.variant.c_str(), c.share, where(c).c_str(), w.checks);
    lines.push_back(std::string(buf) + (c.detail.empty() ? "" : ": " + c.detail));
  }
  // The worst variant of each op and dtype, in the order the ops and dtypes came.
  std::vector<const WorstShare*> worst_per_dtype;
  for (const WorstShare& w : table.rows()) {
    const auto it = std::find_if(worst_per_dtype.begin(), worst_per_dtype.end(), [&](const WorstShare* o) {
      return o->worst.op == w.worst.op && o->worst.dtype == w.worst.dtype;
    });
    if (it == worst_per_dtype.end()) worst_per_dtype.push_back(&w);
    else if (w.worst.share > (*it)->worst.share) *it = &w;
  }
  for (const WorstShare* w : worst_per_dtype) {
    const ProbeCheck& c = w->worst;
    std::snprintf(buf, sizeof buf, "%s %s: worst %.3g of its tolerance (%s, %s)", c.op.c_str(),
                  std::string(dtype_name(c.dtype)).c_str(), c.share, c.variant.c_str(), where(c).c_str());
    lines.emplace_back(buf);
  }
  return lines;
}

}  // namespace kbench
