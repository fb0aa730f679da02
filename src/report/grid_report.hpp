// The grid's and the fit's parts of a report, from their JSON (extra.grid.analysis of a grid
// result, extra.fit of a fit result: experiments/grid_analysis.hpp, experiments/fit.hpp), so
// the report layer needs nothing from experiments/. The regret heatmap is drawn by
// scripts/plot_grid.py from the same file.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace kbench {

// Mean and 95th-percentile regret and cells off; a table of every cell (best plan, the rule's
// choice, regret); the cells more than 10% off, worst first.
std::string grid_markdown(const nlohmann::json& analysis);

// Both runs' regrets under the current rule, each direction's fitted thresholds with their
// held-out figures, the noise and the decision.
std::string fit_markdown(const nlohmann::json& fit);

}  // namespace kbench
