// The probe's part of a report: its analysis (extra.probe.analysis, experiments/
// probe_analysis.hpp) as a markdown table and its statement. Reads the JSON only, so the report
// layer needs nothing from experiments/.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace kbench {

// A row per pause: repetitions, first sample (median and worst), its slowdown against steady,
// the clocks of the first sample (kernel-measured and NVML), settling times; then the statement.
std::string probe_markdown(const nlohmann::json& analysis);

}  // namespace kbench
