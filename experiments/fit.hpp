// `kbench fit A.json B.json`: a better row rule, judged on data it was not fitted on. A pure
// function of two grid results of one op (two runs of the same grid, taken apart in time); no
// GPU.
//
// The rule is row_plan itself (kernels/rows/row_plan.hpp) with the thresholds of the op's
// RowRules searched over a small space (RuleParams): where rows split, how wide a resident row
// may be (and up to how many rows a wide row stays resident), the looped chunk by blocks in
// flight (width) and rows per SM, where the warp plan gives way to a block, where lanes take 4
// vectors instead of 1, where float32 blocks take 8 vectors a thread. The rule fitted on A
// (lowest mean regret on A) is judged on B, and the rule fitted on B on A. The current rule's
// own difference between A and B is the noise: a fitted rule is adopted only if both
// directions beat the current rule on their held-out run by more than it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/rows/row_plan.hpp"
#include "record/result.hpp"

namespace kbench {

// The thresholds of RowRules that the fit searches.
struct RuleParams {
  int split_below_divisor = 2;
  std::int64_t split_above_width = 8192;
  std::int64_t split_all_sms_above_width = rows::kMaxWidth;
  std::int64_t auto_resident_vecs = 4096;
  int chunk_8192_per_sm = 4;
  int chunk_4096_per_sm = 8;
  bool chunk_counts_rows = false;
  std::int64_t warp_max_vecs = 256;
  std::int64_t eight_vectors_above = 0;
  int warp_min_rows_per_sm = 0;
  int wide_resident_rows_per_sm = 0;
  std::int64_t one_vector_max_vecs = 32;
  bool operator==(const RuleParams&) const = default;
};

RuleParams params_of(const rows::RowRules& r);
rows::RowRules with_params(rows::RowRules r, const RuleParams& p);
nlohmann::json to_json(const RuleParams& p);

// The candidates: the current thresholds first, then every combination of a few values each
// (eight_vectors_above varied only where the op's float32 blocks take 8 vectors). Thresholds
// named in `held` (to_json's keys) keep their current values: evidence from outside the grid
// (a sweep's shapes) has settled them. UsageError for a name that is not a threshold.
std::vector<RuleParams> rule_space(const rows::RowRules& current, const std::vector<std::string>& held = {});
void validate_held(const std::vector<std::string>& held);  // the UsageError above, alone

// The fit's verdict, as extra.fit of its result: both runs' current regrets, each direction's
// fitted thresholds with their regret on the run they were fitted on and on the held-out one,
// the noise, the decision and the goal. Throws UsageError (one line) when A and B cannot be
// compared: not grids, different devices, ops, cells or timing (cache mode and timer), or the
// same run twice.
// `set` holds thresholds at given values instead of their current ones (kbench fit --set
// NAME=VALUE): the search starts from them, and the rule to beat stays the compiled one, so a
// value outside evidence suggests can be judged without editing the op's rules.
nlohmann::json fit_grids(const Result& a, const Result& b, const std::string& a_name, const std::string& b_name,
                         const std::vector<std::string>& held = {}, const std::map<std::string, std::int64_t>& set = {});

// The fit's result file (schema v1, experiment "fit", no records): extra.fit = fit_grids.
Result fit_result(const Result& a, const Result& b, const std::string& a_name, const std::string& b_name,
                  const std::vector<std::string>& argv, const std::vector<std::string>& held = {},
                  const std::map<std::string, std::int64_t>& set = {});

// --set's NAME=VALUE texts; UsageError (one line) for a name that is not a threshold, a value
// that is not a whole number, or a name given twice.
std::map<std::string, std::int64_t> parse_set_values(const std::vector<std::string>& texts);
// p with the named thresholds set (chunk_counts_rows: 0 or not).
RuleParams with_values(RuleParams p, const std::map<std::string, std::int64_t>& values);

}  // namespace kbench
