// The docs half of `kbench verify`: every timing or bandwidth quoted in README.md and
// docs/**/*.md must match a saved figure of a record that agrees with what its line names
// (op, dtype, shape, cache, timer); a figure of an archived result counts only in a paragraph
// that cites that result's file (a table or a list also by the sentence that introduces it).
// docs/records/ is skipped: its notes log scratch work, whose figures
// come from scratch runs, not from results.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "record/result.hpp"
#include "record/verify.hpp"

namespace kbench {

// What a saved figure is a figure of, and which result file holds it (relative to the root).
// A timer floor has no op, dtype or shape, and agrees with any.
struct Figure {
  double value;
  std::string op, dtype, shape, cache, timer;
  std::string file;
};

// The figures verify can trace: medians for times (records, and the sweep's timer floors in
// extra.timer_floor, extra.timer_floor_before and extra.timer_floor_start), gbps for bandwidths.
struct SavedFigures {
  std::vector<Figure> median_us;
  std::vector<Figure> gbps;

  void add(const Result& result, const std::string& file);
  void add_ops_to(std::set<std::string>& ops) const;
};

// Adds a problem for every figure in the docs under `root` that matches no saved one.
void check_docs(const std::filesystem::path& root, const SavedFigures& current,
                const SavedFigures& archived, VerifyReport& report);

}  // namespace kbench
