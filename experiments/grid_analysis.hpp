// The grid's analysis, a pure function of a result's records and extra.grid (no GPU; the CPU
// tests build results by hand): per cell the best plan (lowest median), the rule's choice and
// its regret (its median over the best, minus 1); over the cells the mean and 95th percentile
// of regret and the cells more than 10% off. `kbench fit` reads grids through the same code.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/device_limits.hpp"
#include "record/result.hpp"

namespace kbench {

// A cell more than this far off the best (regret > 0.10) is "off".
inline constexpr double kOffRegret = 0.10;

struct GridTimes {
  std::string dtype;
  std::int64_t rows = 0, width = 0;
  std::map<std::string, double> plan_us;  // median of each plan timed (those that passed their check)
  std::string rule;                       // the rule's choice when the grid was run
};

struct GridData {
  std::string op;
  std::string cache, timer;  // the cache mode and timer its cells are timed by
  DeviceLimits dev;
  std::vector<GridTimes> cells;
};

// The cells of a grid result, timed by its first cache mode and timer. UsageError (one line)
// when the result is not a grid, its extra.grid is malformed (a field of the wrong type, a
// cell's rows or width not a whole number in range, a cell twice, device limits out of range)
// or it holds no cell with a timed plan.
GridData grid_data(const Result& r);

struct CellRegret {
  std::string dtype;
  std::int64_t rows = 0, width = 0;
  std::string best, choice;
  double best_us = 0, choice_us = 0, regret = 0;
};

struct RegretSummary {
  int cells = 0;          // cells with the choice timed
  double mean = 0, p95 = 0;
  int off = 0;            // cells with regret > kOffRegret
  std::vector<CellRegret> per_cell;
  std::vector<std::string> untimed;  // "bfloat16 4x8192: looped.c4096.t256": the choice was not timed
};

// The regret of a rule (the plan name it chooses per cell) over the cells.
using PlanChooser = std::function<std::string(const GridTimes&)>;
RegretSummary regret_of(const std::vector<GridTimes>& cells, const PlanChooser& choose);

// {cells, mean, p95, off, untimed} and, with per_cell, every cell's regret.
nlohmann::json summary_json(const RegretSummary& s, bool per_cell);

// The cells more than 10% off, worst first: "bfloat16 4x8192: <choice> <us> us against <best> <us>".
nlohmann::json off_cells_json(const RegretSummary& s);

// What extra.grid.analysis holds: the current rule's summary with every cell, and the cells
// more than 10% off, worst first.
nlohmann::json grid_analysis(const Result& r);

}  // namespace kbench
