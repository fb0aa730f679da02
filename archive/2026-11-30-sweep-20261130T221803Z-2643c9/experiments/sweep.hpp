// The sweep experiment behind `kbench run` (and `kbench check`, which stops after checking).
#pragma once

#include <string>
#include <vector>

#include "experiments/sweep_config.hpp"
#include "record/result.hpp"
#include "registry/registry.hpp"

namespace kbench {

struct PlannedCase {
  Case c;
  std::vector<const Variant*> variants;  // selected and supporting the case
  std::vector<std::string> skipped;      // "variant: reason" for selected but unsupported ones
};

// Expands the settings into cases, validating op names, variant names and shape ranks
// (UsageError on any problem). Adds the copy roofline when asked and missing.
std::vector<PlannedCase> plan_cases(const SweepSettings& s);

// Prepares and checks every case, then times them in randomized visits. Check failures are
// returned in the result (extra.check_failures) and their variants are not timed.
Result run_sweep(const SweepSettings& s, const std::vector<std::string>& argv);

// Prepares and checks every case; returns one line per variant and whether all passed.
bool run_checks(const SweepSettings& s, std::vector<std::string>& lines);

}  // namespace kbench
