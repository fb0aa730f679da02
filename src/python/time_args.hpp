// kbench.time()'s keyword arguments, checked before anything touches the GPU: each bad one gets
// a UsageError of one line naming the argument, what it must be and what it was (the module
// raises it as ValueError). Pure Python-object handling, so the CPU test can reach every rule.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "harness/problem.hpp"
#include "python/callable_run.hpp"

namespace kbench::python {

// The documented defaults of the optional arguments.
inline constexpr int kDefaultVisits = 3;
inline constexpr int kDefaultSamples = 3;

// kbench.compare()'s keyword arguments (atol, rtol, stream), checked the same way.
struct CompareRequest {
  Tolerance tolerance;
  cudaStream_t stream = nullptr;
};
CompareRequest parse_compare_args(const pybind11::dict& kwargs);

// `fn` is the callable or a dict of them by variant name; `kwargs` the keyword arguments.
TimeRequest parse_time_args(const pybind11::object& fn, const pybind11::dict& kwargs);

// kbench.time_cases(): `cases` a list of dicts, each a case's fn and its own arguments (op,
// dtype, shape, bytes, flops, inputs, reference, atol, rtol, variant, baseline, params), `kwargs`
// the run's (stream, cache, timer, visits, ...). A bad one names its case ("cases[2]: bytes ...").
std::vector<TimeRequest> parse_time_cases_args(const pybind11::object& cases, const pybind11::dict& kwargs);

}  // namespace kbench::python
