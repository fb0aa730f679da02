// The tolerance probe's table (experiments/tolerance_probe.hpp), kept in the report layer so
// that one piece of code prints it both for `kbench check --tolerance-probe` (from its
// ShareTable) and for `kbench report` (from a "tolerance" result's records): a line per op,
// dtype and variant, then a line per op and dtype with the worst over its variants.
#pragma once

#include <string>
#include <vector>

#include "core/shape.hpp"
#include "record/result.hpp"

namespace kbench {

// One op, dtype and variant: its worst share of the tolerance, where it was found, how many
// checks ran.
struct ShareRow {
  std::string op, dtype, variant;
  double share = 0;    // |out - ref| / (atol + rtol |ref|); infinite: a failure no tolerance measures
  std::string inputs;  // the input kind: "random", "large", ...
  Shape shape;
  int seed = 0;  // 0 .. N-1
  int checks = 0;
  std::string detail;  // the worst check's first failure, if any
};

// "inputs=large 5x8193 seed 17"
std::string share_where(const ShareRow& row);

// The row with the worst share of each op and dtype (the first of equal shares), in the order
// the ops and dtypes first came.
std::vector<const ShareRow*> worst_per_dtype(const std::vector<ShareRow>& rows);

// "softmax float16: worst 0.4 of its tolerance (auto, inputs=large 3x1000 seed 1)"
std::string worst_line(const ShareRow& row);

// What the probe prints: a line per row ("ok" or "FAIL", the worst share, where it was found,
// how many checks), then worst_line for each of worst_per_dtype.
std::vector<std::string> share_lines(const std::vector<ShareRow>& rows);

// The rows of a result's records that carry a tolerance_probe block, in file order. Reads what
// a file holds without trusting it: a null share is infinite (JSON has no infinity), a missing
// or mistyped one NaN (a FAIL line), a missing input kind "?".
std::vector<ShareRow> share_rows_from_records(const std::vector<Record>& records);

// The report's part for a "tolerance" result: share_lines of its records in a code block, so
// that the report shows the table the probe printed.
std::string tolerance_markdown(const Result& result);

}  // namespace kbench
