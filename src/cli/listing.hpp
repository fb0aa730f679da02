// What `kbench list` shows, in three formats: the ops, their parameters and variants (with the
// dtypes each accepts), the experiments, and the method's constants, the numbers the harness
// times with unless told otherwise. The JSON form is a contract (src/record/list.schema.json):
// programs read the constants from it instead of copying them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kbench {

// {"schema": "kbench/list/v1", "version", "ops": [...], "experiments": [...], "method": {...}}.
nlohmann::json listing_json();

// The listing as markdown (a table of variants per op, then the method's constants) or as CSV
// (one row per variant).
std::string listing_markdown(const nlohmann::json& listing);
std::string listing_csv(const nlohmann::json& listing);

}  // namespace kbench
