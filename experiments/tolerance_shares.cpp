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

std::vector<Record> share_records(const ShareTable& table) {
  std::vector<Record> records;
  for (const WorstShare& w : table.rows()) {
    const ProbeCheck& c = w.worst;
    Record r;
    r.op = c.op;
    r.variant = c.variant;
    r.baseline = c.baseline;
    r.dtype = dtype_name(c.dtype);
    r.shape = c.shape;
    r.cache = r.timer = kUntimed;
    r.timer_note = "not timed: checked against the FP64 oracle as kbench check checks";
    r.params = c.params;
    // share > 1 exactly when the check failed (CheckInfo::share).
    r.check = CheckInfo{c.share <= 1, c.max_err, c.tolerance, c.detail, c.share};
    // An infinite share is written null (JSON has no infinity); the report reads it back as such.
    r.tolerance_probe = {{"share", c.share}, {"inputs", input_kind_name(c.kind)}, {"seed", c.seed}, {"checks", w.checks}};
    records.push_back(std::move(r));
  }
  return records;
}

nlohmann::json share_extra(const ShareTable& table, const nlohmann::json& settings) {
  const std::vector<ShareRow> rows = share_rows_from_table(table);
  nlohmann::json worst = nlohmann::json::array();
  for (const ShareRow* w : worst_per_dtype(rows))
    worst.push_back({{"op", w->op}, {"dtype", w->dtype}, {"variant", w->variant}, {"share", w->share},
                     {"inputs", w->inputs}, {"shape", w->shape}, {"seed", w->seed}, {"line", worst_line(*w)}});
  return {{"settings", settings}, {"worst", worst}};
}

}  // namespace kbench
