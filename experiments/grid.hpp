// `kbench grid`: which row plan wins where. For one row op, every plan its kernels run
// (kernels/rows/row_plan.hpp grid_plans: resident with each vector count, looped with each
// chunk, split) is checked and timed on a grid of row counts x widths, and the plan the current
// rule (row_plan) takes at each cell is recorded beside them, so that the analysis
// (experiments/grid_analysis.hpp) can give the rule's regret and `kbench fit` can judge others.
//
// It runs on the shared runner (harness/runner.hpp): a cell is one case whose variants are
// its plans, so the plans of a cell share one input set and one oracle, and the runner's
// randomized visits shuffle cells and, within a visit, the plans of a cell. Cells above
// GridSettings::check_full_up_to elements compare a fixed-seed sample of rows per plan
// (MeasuredCase::check_rows). Records carry the plan's parameters (Record::plan); extra.grid
// holds the cells, the rule's choice at each and the analysis.
#pragma once

#include <string>
#include <vector>

#include "device/device_limits.hpp"
#include "experiments/grid_config.hpp"
#include "harness/runner.hpp"
#include "kernels/rows/row_plan.hpp"

namespace kbench {

struct GridCell {
  DType dtype = DType::bf16;
  std::int64_t rows = 0, width = 0;
  std::vector<rows::RowPlan> plans;
  std::string rule;                     // plan_name of row_plan's choice (one of plans)
  std::vector<std::int64_t> check_rows;  // empty: every row is checked
};

// The row counts of the settings on a device of dev.sms SMs: `rows` and round(m x sms) for
// each m of rows_per_sm (at least 1), sorted, without repeats.
std::vector<std::int64_t> grid_row_counts(const GridSettings& s, const DeviceLimits& dev);

// Every (dtype, rows, width) of the settings up to max_elements, with its plans. Cells left out
// for size are named in `left_out` ("1056x1048576"). Throws UsageError when no cell is left
// (validate_grid_settings is called first).
std::vector<GridCell> grid_cells(const GridSettings& s, const DeviceLimits& dev, std::vector<std::string>* left_out);

// The experiment for the runner: needs the registry (the op's launchers) but no GPU until run.
Experiment grid_experiment(const GridSettings& s, const DeviceLimits& dev);

// The grid's analysis of a result (extra.grid.analysis, experiments/grid_analysis.hpp) over its
// records, whose plans are already recorded: what kbench merge runs over a grid's joined shards.
void grid_reanalysis(Result& r);

// The seed of a cell's sampled rows: fixed by the run's seed and the cell, so that a rerun
// checks the same rows.
std::uint64_t check_seed(std::uint64_t seed, std::int64_t rows, std::int64_t width);

}  // namespace kbench
