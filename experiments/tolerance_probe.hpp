// kbench check --tolerance-probe N: how much of its tolerance each op's worst error uses. For
// every selected op and dtype, every input kind the op draws (harness/problem.hpp: its random
// inputs and the adversarial kinds of its *_op.cpp) on a few awkward shapes, N seeds each; on
// every set of inputs, each variant that supports the shape is checked as `kbench check` checks
// (NaN-poisoned outputs, every element, a second launch) and its worst error taken as a share
// of the tolerance (experiments/tolerance_shares.hpp). Ops take their parameters' defaults.
//
// With a result file (kbench check --tolerance-probe N --out DIR) it runs on the shared runner
// (harness/runner.hpp) as experiment "tolerance", with no cases of the runner's: its checks run
// through Experiment::time_own, and the runner records the device, load, warm-up and manifest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/tolerance_shares.hpp"
#include "harness/runner.hpp"
#include "registry/registry.hpp"

namespace kbench {

// Not ProbeSettings: experiments/probe.hpp has one, and two classes of one name in one binary
// break the one-definition rule (their inline members would be merged by the linker).
struct ToleranceSettings {
  int seeds = 0;                           // N, per op, dtype, input kind and shape
  std::vector<std::string> ops, variants;  // empty: every op, every variant
  std::vector<DType> dtypes;               // empty: every dtype
  std::uint64_t seed = 1;                  // the base the inputs' seeds are derived from
  int device = 0;
};

// The probe's shapes for an op of `rank` (empty for a rank it has none for): the awkward row
// shapes of the GPU tests, a few rows each (one element; a warp-sized row; a single-block row;
// a looped row just past 8192; a split row past 32768), and gemm's ragged and long-K products,
// so that N = 100 takes well under a minute.
std::vector<Shape> probe_shapes(std::size_t rank);

// One op and dtype of the probe: its cases (a shape and an input kind each, parameters at
// their defaults) and the variants to check on each (those that support it).
struct ProbeCase {
  Case c;
  std::vector<const Variant*> variants;
};

// Every case of the probe, from the registry; UsageError (one line) for a bad N, an unknown op
// or a variant that no selected op has. Needs no GPU.
std::vector<ProbeCase> plan_tolerance_probe(const ToleranceSettings& s);

// Runs the planned cases on s.device, N seeds each.
ShareTable run_tolerance_probe(const ToleranceSettings& s, const std::vector<ProbeCase>& cases);

// The same as an experiment of the runner: records share_records of the table, one per op,
// dtype and variant (untimed), each op measured with its own sources; extra.tolerance
// share_extra, with the settings. Needs no GPU until run.
Experiment tolerance_experiment(const ToleranceSettings& s, const std::vector<ProbeCase>& cases);

}  // namespace kbench
