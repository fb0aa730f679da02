#include "experiments/grid_config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/json_schema.hpp"
#include "core/shape.hpp"
#include "experiments/sweep_config.hpp"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_plan.hpp"

namespace kbench {

namespace {

const char* const kRowOpList = "row_sum, softmax, softmax_backward, rmsnorm, rmsnorm_backward";

bool is_row_op(const std::string& op) {
  try {
    rows::row_rules(op);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// The format of grid configs (compiled in: cmake/Schemas.cmake).
constexpr const char* kGridSchema = "configs/schema/grid.schema.json";

}  // namespace

GridSettings load_grid_config(const std::filesystem::path& file) {
  const nlohmann::json j = read_config_json(file);
  const std::string where = "config '" + file.string() + "'";
  // Keys, types and ranges are the schema's; what follows converts, and checks the ops.
  JsonSchema::embedded(kGridSchema).validate(j, where);
  GridSettings s;
  s.config_path = file.string();
  s.description = j.value("description", "");
  s.ops = j.value("ops", std::vector<std::string>{});
  for (const auto& op : s.ops)
    if (!is_row_op(op)) throw UsageError(where + ": '/ops' lists '" + op + "', which is not a row op (" + std::string(kRowOpList) + ")");
  if (s.ops.size() == 1) s.op = s.ops.front();
  s.dtypes.clear();
  for (const auto& d : j.value("dtypes", std::vector<std::string>{"bfloat16"})) s.dtypes.push_back(parse_dtype(d));
  s.rows = j.value("rows", std::vector<std::int64_t>{});
  s.rows_per_sm = j.value("rows_per_sm", std::vector<double>{});
  s.widths = j.value("widths", std::vector<std::int64_t>{});
  s.max_elements = j.value("max_elements", s.max_elements);
  s.check_full_up_to = j.value("check_full_up_to_elements", s.check_full_up_to);
  s.check_sample_rows = j.value("check_sample_rows", s.check_sample_rows);
  s.caches = config_modes(j, "cache", where, s.caches, parse_cache_modes);
  s.timers = config_modes(j, "timer", where, s.timers, parse_timers);
  s.visits = j.value("visits", s.visits);
  s.samples = j.value("samples", s.samples);
  s.seed = j.value("seed", s.seed);
  return s;
}

void validate_grid_settings(const GridSettings& s) {
  if (s.op.empty()) throw UsageError("grid: choose one op with --op (the config lists " + std::to_string(s.ops.size()) + ")");
  if (!s.ops.empty() && std::find(s.ops.begin(), s.ops.end(), s.op) == s.ops.end())
    throw UsageError("grid: op '" + s.op + "' is not among the config's ops");
  if (!is_row_op(s.op)) throw UsageError("grid: '" + s.op + "' is not a row op (" + std::string(kRowOpList) + ")");
  if (s.dtypes.empty()) throw UsageError("grid: no dtypes");
  if (s.rows.empty() && s.rows_per_sm.empty()) throw UsageError("grid: no row counts (rows or rows_per_sm)");
  if (s.widths.empty()) throw UsageError("grid: no widths");
  for (const auto r : s.rows)
    if (r < 1 || r > kMaxDim) throw UsageError("grid: row count " + std::to_string(r) + " is outside 1..2^33");
  for (const auto r : s.rows_per_sm)
    if (!(r > 0 && r <= kMaxRowsPerSm)) throw UsageError("grid: rows_per_sm values must lie above 0, at most 65536");
  for (const auto w : s.widths)
    if (w < 1 || w > rows::kMaxWidth) throw UsageError("grid: width " + std::to_string(w) + " is outside 1..2^20");
  if (s.max_elements < 1 || s.check_full_up_to < 0 || s.check_sample_rows < 2)
    throw UsageError("grid: max_elements must be >= 1, check_sample_rows >= 2");
  if (s.visits < 1 || s.samples < 1 || s.visits > kMaxVisitsOrSamples || s.samples > kMaxVisitsOrSamples)
    throw UsageError("grid: visits and samples must lie in 1.." + std::to_string(kMaxVisitsOrSamples));
  if (s.caches.empty() || s.timers.empty()) throw UsageError("grid: no cache mode or no timer");
  // A grid with no cells on any device: its smallest cell is above max_elements. A row count
  // of rows_per_sm m is round(m x SMs) >= round(m) on any device, and at least 1.
  std::int64_t fewest_rows = std::numeric_limits<std::int64_t>::max();
  for (const auto r : s.rows) fewest_rows = std::min(fewest_rows, r);
  for (const auto m : s.rows_per_sm) fewest_rows = std::min(fewest_rows, std::max<std::int64_t>(1, std::llround(m)));
  const std::int64_t narrowest = *std::min_element(s.widths.begin(), s.widths.end());
  if (fewest_rows * narrowest > s.max_elements)
    throw UsageError("grid: no cells (the smallest, " + std::to_string(fewest_rows) + "x" + std::to_string(narrowest) +
                     ", is above max_elements " + std::to_string(s.max_elements) + ")");
  const bool cold = std::count(s.caches.begin(), s.caches.end(), "cold") > 0;
  const bool graph = std::count(s.timers.begin(), s.timers.end(), "graph") > 0;
  if (cold && graph)
    throw UsageError("grid: cold graph timing rotates 3x L2 of input copies per cell (over 10^5 for the smallest "
                     "cells); use --cache warm, or --timer events or cupti for cold");
}

}  // namespace kbench
