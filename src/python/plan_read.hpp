// kbench.plan: a sweep config's cases as `kbench run` plans them, with the bytes and flops each
// case's records count, from the kbench binary built beside the module (`kbench run --dry-run
// --format json`, harness/dry_run.hpp plan_json). The module holds no registry (it stands below
// the kernels), so what an op is and what it moves is asked of the program that holds them,
// never copied into Python.
#pragma once

#include <pybind11/pybind11.h>

namespace kbench::python {

// plan(config, *, ops=None, dtypes=None, cache=None, timer=None, visits=None, samples=None,
// seed=None): kbench/plan/v1 as a dict, the roofline cases left out. UsageError with kbench's own
// line (its "kbench: error: " prefix off) for a config or an option kbench refuses, when no
// kbench binary is found, or when its plan does not pass src/record/plan.schema.json.
pybind11::object read_plan(const pybind11::object& config, const pybind11::kwargs& kwargs);

}  // namespace kbench::python
