// `kbench report --format csv|json`: every record of the result files as one CSV row, for a
// spreadsheet or a plotting script that should not parse JSON. A pure function of results in
// memory, as report.hpp's tables are.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace kbench {

// One header line, then a row per record that passes `filter`, in file order: the file, the
// run's experiment, device and commit, the case (op, variant, baseline, dtype, shape as
// "MxNxK", params as "name=value;..."), cache, timer, sample count, median, quartiles, minimum,
// GB/s, TFLOP/s, fraction of the copy roofline, the check, and the median of the samples' visit
// floors (Record::sample_floor_us; empty where the record has none). Fields with a comma, a quote or
// a line break are quoted (RFC 4180); a field that a spreadsheet would read as a formula
// (=, +, -, @ first) gets a leading apostrophe, so that a file name cannot run as one.
std::string records_csv(const std::vector<ReportInput>& inputs, const ReportFilter& filter);

// The same rows as JSON, `kbench report --format json` and `kbench run --format json`:
// {"schema": "kbench/records/v1", "records": [{column: value}]}, with the CSV's columns as keys,
// the values typed (shape a list, params an object, baseline and check_passed booleans,
// floor_us null where the CSV leaves it empty).
nlohmann::json records_json(const std::vector<ReportInput>& inputs, const ReportFilter& filter);

// A CSV field as records_csv writes it.
std::string csv_field(const std::string& value);

}  // namespace kbench
