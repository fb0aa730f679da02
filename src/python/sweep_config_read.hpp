// kbench.read_sweep_config: a sweep config (configs/*.json) read as `kbench run --config` reads
// it, for scripts that time the same cases (scripts/torch_baseline.py). The module stands below
// the experiments (tests/cpu/test_layers.cpp), so this is not experiments/sweep_config.cpp but
// the same steps on the same compiled-in schema, worded the same: a CPU test (test_torch_script)
// holds its one-line errors equal to kbench's over the bad-config corpus.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kbench::python {

// {"experiment", "description", "cache", "timer", "visits", "samples", "seed", "cases"}: cache and
// timer as lists ("both" and "all" expanded; kbench's defaults where absent), each case as
// {"op", "dtypes" (default ["float32"]), "shapes", "variants", "params"}. UsageError (one line)
// for an unreadable file, bad JSON, a config the schema refuses or a mode named twice.
nlohmann::json read_sweep_config(const std::string& path);

}  // namespace kbench::python
