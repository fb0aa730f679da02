#include "experiments/tolerance_shares.hpp"

#include <algorithm>

namespace kbench {

namespace {

bool same_row(const ProbeCheck& a, const ProbeCheck& b) {
  return a.op == b.op && a.dtype == b.dtype && a.variant == b.variant;
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

std::vector<ShareRow> share_rows_from_table(const ShareTable& table) {
  std::vector<ShareRow> rows;
  for (const WorstShare& w : table.rows()) {
    const ProbeCheck& c = w.worst;
    rows.push_back(ShareRow{c.op, std::string(dtype_name(c.dtype)), c.variant, c.share,
                            std::string(input_kind_name(c.kind)), c.shape, c.seed, w.checks, c.detail});
  }
  return rows;
}

std::vector<std::string> share_report(const ShareTable& table) { return share_lines(share_rows_from_table(table)); }

}  // namespace kbench
