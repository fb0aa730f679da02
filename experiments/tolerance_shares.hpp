// What the tolerance probe reports (experiments/tolerance_probe.hpp), kept apart from running it
// so that the CPU tests can drive it: every check's worst error as a share of its tolerance
// (CheckInfo::share: |out - ref| / (atol + rtol |ref|), above 1 a failure), gathered into the
// worst share of each op, dtype and variant and the input kind, shape and seed that gave it;
// and the records and extra.tolerance of its result file (experiment "tolerance").
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/problem.hpp"
#include "record/result.hpp"
#include "report/tolerance_report.hpp"

namespace kbench {

// One check of the probe: a variant on one seed of one input kind at one shape.
struct ProbeCheck {
  std::string op, variant;
  DType dtype = DType::f32;
  Shape shape;
  InputKind kind = InputKind::random;
  int seed = 0;  // 0 .. N-1
  double share = 0;
  std::string detail;  // the check's first failure, if any
  // What the worst check's record carries beside its share: the variant's kind, the check's
  // max_err and tolerance (CheckInfo), the case's parameters (the op's defaults).
  bool baseline = false;
  double max_err = 0, tolerance = 0;
  std::map<std::string, double> params = {};
};

// The worst check of one op, dtype and variant (the first of equal shares), and how many ran.
struct WorstShare {
  ProbeCheck worst;
  int checks = 0;
};

class ShareTable {
 public:
  void add(const ProbeCheck& check);
  // One row per op, dtype and variant, in the order they were first added.
  const std::vector<WorstShare>& rows() const { return rows_; }
  // Every share within its tolerance (<= 1); true for an empty table.
  bool all_within() const;

 private:
  std::vector<WorstShare> rows_;
};

// The table's rows as the report layer prints them.
std::vector<ShareRow> share_rows_from_table(const ShareTable& table);

// The report: a line per op, dtype and variant ("ok" or "FAIL", the worst share, where it was
// found, how many checks), then a line per op and dtype with the worst over its variants
// (share_lines, which `kbench report` prints from the result's records too).
std::vector<std::string> share_report(const ShareTable& table);

// One untimed record per row (cache and timer "none"): the worst check's op, variant, dtype,
// shape, parameters and check, and its tolerance_probe block {share, inputs, seed, checks}.
std::vector<Record> share_records(const ShareTable& table);

// extra.tolerance: {"settings": settings, "worst": [{op, dtype, variant, share, inputs, shape,
// seed, line}]}, one per op and dtype (its worst variant; line as the report prints it).
nlohmann::json share_extra(const ShareTable& table, const nlohmann::json& settings);

}  // namespace kbench
