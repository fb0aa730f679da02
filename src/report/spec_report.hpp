// The spec experiment's part of a report: its analysis (extra.spec.analysis, experiments/
// spec_analysis.hpp) as a markdown table per op, each build's time beside its kernel's
// attributes, the comparisons, then each op's statement. Reads the JSON only, so the report
// layer needs nothing from experiments/.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace kbench {

std::string spec_markdown(const nlohmann::json& analysis);

}  // namespace kbench
