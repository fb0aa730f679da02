#include "experiments/grid_config.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "experiments/sweep_config.hpp"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_plan.hpp"

namespace kbench {

GridSettings load_grid_config(const std::filesystem::path& file) {
  const nlohmann::json j = read_config_json(file);
  const std::string where = "config '" + file.string() + "'";
  GridSettings s;
  s.config_path = file.string();
  s.description = config_field<std::string>(j, "description", where, "");
  s.ops = config_field<std::vector<std::string>>(j, "ops", where, {});
  if (s.ops.size() == 1) s.op = s.ops.front();
  const auto dtypes = config_field<std::vector<std::string>>(j, "dtypes", where, {"bfloat16"});
  s.dtypes.clear();
  for (const auto& d : dtypes) s.dtypes.push_back(parse_dtype(d));
  s.rows = config_field<std::vector<std::int64_t>>(j, "rows", where, {});
  s.rows_per_sm = config_field<std::vector<double>>(j, "rows_per_sm", where, {});
  s.widths = config_field<std::vector<std::int64_t>>(j, "widths", where, {});
  s.max_elements = config_field<std::int64_t>(j, "max_elements", where, s.max_elements);
  s.check_full_up_to = config_field<std::int64_t>(j, "check_full_up_to_elements", where, s.check_full_up_to);
  s.check_sample_rows = config_field<std::int64_t>(j, "check_sample_rows", where, s.check_sample_rows);
  const auto cache = config_field<std::string>(j, "cache", where, "warm");
  const auto timer = config_field<std::string>(j, "timer", where, "graph");
  s.caches = parse_cache_modes(cache);
  s.timers = parse_timers(timer);
  s.visits = config_field<int>(j, "visits", where, s.visits);
  s.samples = config_field<int>(j, "samples", where, s.samples);
  s.seed = config_field<std::uint64_t>(j, "seed", where, s.seed);
  return s;
}

void validate_grid_settings(const GridSettings& s) {
  if (s.op.empty()) throw UsageError("grid: choose one op with --op (the config lists " + std::to_string(s.ops.size()) + ")");
  if (!s.ops.empty() && std::find(s.ops.begin(), s.ops.end(), s.op) == s.ops.end())
    throw UsageError("grid: op '" + s.op + "' is not among the config's ops");
  try {
    rows::row_rules(s.op);
  } catch (const std::invalid_argument&) {
    throw UsageError("grid: '" + s.op + "' is not a row op (row_sum, softmax, softmax_backward, rmsnorm, rmsnorm_backward)");
  }
  if (s.dtypes.empty()) throw UsageError("grid: no dtypes");
  if (s.rows.empty() && s.rows_per_sm.empty()) throw UsageError("grid: no row counts (rows or rows_per_sm)");
  if (s.widths.empty()) throw UsageError("grid: no widths");
  for (const auto r : s.rows)
    if (r < 1) throw UsageError("grid: row count " + std::to_string(r) + " is below 1");
  for (const auto r : s.rows_per_sm)
    if (!(r > 0)) throw UsageError("grid: rows_per_sm values must be positive");
  for (const auto w : s.widths)
    if (w < 1 || w > rows::kMaxWidth) throw UsageError("grid: width " + std::to_string(w) + " is outside 1..2^20");
  if (s.max_elements < 1 || s.check_full_up_to < 0 || s.check_sample_rows < 2)
    throw UsageError("grid: max_elements must be >= 1, check_sample_rows >= 2");
  if (s.visits < 1 || s.samples < 1) throw UsageError("grid: visits and samples must be >= 1");
  const bool cold = std::count(s.caches.begin(), s.caches.end(), "cold") > 0;
  const bool graph = std::count(s.timers.begin(), s.timers.end(), "graph") > 0;
  if (cold && graph)
    throw UsageError("grid: cold graph timing rotates 3x L2 of input copies per cell (over 10^5 for the smallest "
                     "cells); use --cache warm, or --timer events for cold");
}

}  // namespace kbench
