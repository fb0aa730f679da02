// `kbench compare A.json B.json`: each case of two runs side by side, the ratio of its medians
// (B over A) and a verdict. A pure function of results in memory, so the CPU tests build them
// by hand; only cli/cmd_compare.cpp reads files.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "record/result.hpp"
#include "report/report.hpp"

namespace kbench {

// One case found in both files: matched by op, variant, dtype, shape, params, cache and timer.
struct CaseComparison {
  const Record* a = nullptr;
  const Record* b = nullptr;
  double ratio = 0;         // b->median_us / a->median_us: above 1, B is slower
  double lo = 0, hi = 0;    // its interval (both 0: no samples to draw from)
  double coverage = 0;      // the interval's coverage (order statistics, paired) or 0.95 (bootstrap)
  std::size_t visits = 0;   // paired by visit: how many; 0: from the two samples
  std::string verdict;      // "faster" | "slower" | "same" (of B against A)
};

struct Comparison {
  std::vector<CaseComparison> cases;           // in A's record order
  std::vector<const Record*> only_a, only_b;   // listed, not compared
  int faster = 0, slower = 0, same = 0;
};

// The verdict's noise band, in percent: a ratio within 1 +- band/100 is "same" whatever its
// interval says.
inline constexpr double kDefaultNoisePct = 2.0;

// Compares the timed records of b against a's (untimed ones, the tolerance probe's, have no
// times). Throws UsageError for a median that is not a positive number (a file edited by
// hand). The records pointed to are a's and b's: keep them alive.
Comparison compare_results(const Result& a, const Result& b, double noise_pct = kDefaultNoisePct);

// The cases slower by more than pct percent (their verdict "slower": interval above 1 too).
std::vector<const CaseComparison*> regressions(const Comparison& c, double pct);

// Run to run: per timer (in the order first met), how many of the cases whose medians are above
// `min_us` in both files have B's median within `pct` percent of A's, and the case furthest
// apart. Issue 17 asks of the same sweep run twice on one GPU that at least 95% of the cases
// above 5 us agree within 1%; the defaults are that criterion.
inline constexpr double kAgreementMinUs = 5.0;
inline constexpr double kAgreementPct = 1.0;
struct Agreement {
  std::string timer;
  int cases = 0, within = 0;
  const CaseComparison* furthest = nullptr;  // the largest |B / A - 1|
  double share() const { return cases ? static_cast<double>(within) / cases : 0; }
};
std::vector<Agreement> run_to_run_agreement(const Comparison& c, double min_us = kAgreementMinUs,
                                            double pct = kAgreementPct);

// A header naming the files, the table of cases, the cases found in one file only, a summary
// line ("N faster, M slower, K same; X only in A, Y only in B") and the run-to-run agreement
// per timer.
std::string compare_markdown(const ReportInput& a, const ReportInput& b, const Comparison& c,
                             double noise_pct = kDefaultNoisePct);

}  // namespace kbench
