// kbench from Python: timing Python callables with the experiment runner (harness/runner.hpp).
//
// A callable is a variant whose launch is a call into Python: the runner's timers (events, graph,
// cupti) call it where they would launch a kernel, on the caller's stream, which the callable
// enqueues its work on. The harness runs with the GIL released; each launch takes it for the call
// alone, so the GIL is never held while the harness waits on the GPU.
//
// What differs from a registered op is only what the runner cannot do for Python: the inputs are
// the caller's (an `inputs` callable makes one set, called again for the rotation sets of cold
// graph timing), and the check compares the callable's outputs with the caller's reference
// (element tolerance given by the caller) before anything is timed, with the poisoned-output rule
// and the second-launch bit check of harness/prepare.hpp.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace kbench::python {

struct CallableVariant {
  std::string name;
  pybind11::object fn;
  bool baseline = false;
};

// kbench.time()'s arguments, checked (time_args.hpp); kbench.time_cases() makes one per case, the
// run's options (stream to settings) the same in each.
struct TimeRequest {
  std::vector<CallableVariant> variants;
  std::uintptr_t stream = 0;  // the caller's cudaStream_t
  std::optional<int> device;  // empty: the current device
  std::string op;
  DType dtype = DType::f32;
  Shape shape;
  double bytes = 0, flops = 0;
  pybind11::object inputs;     // None, or a callable returning one input set (a tuple of arguments)
  pybind11::object reference;  // None, a callable taking an input set, or tensor-like(s)
  // One tolerance for every output, or one per output (the same count in both when both list).
  std::vector<double> atol{0}, rtol{0};
  std::map<std::string, double> params;  // the op's parameters, into the records (Record::params)
  std::vector<std::string> caches, timers;
  int visits = 3, samples = 3;
  std::uint64_t seed = 1;
  double clock_floor = 0.9;
  std::string experiment = "python";
  std::optional<std::string> out_dir;
  std::string tag;   // non-empty: the file is <experiment>-<tag>-<time>-<id>.json
  std::string tool;  // non-empty: meta.tool, the program that defined the callables
  nlohmann::json settings = nlohmann::json::object();  // the caller's own, into meta.settings
};

// The most input sets cold graph timing makes: a case whose bytes are under 3x L2 / this cannot be
// timed cold in a graph (a ValueError says so and what to use instead).
inline constexpr std::size_t kMaxRotationSets = 1024;

// Checks every variant of every case, then times them all in one run of the runner (one warm-up,
// one set of floors, the units of all cases visited in one shuffled order); returns the result as
// JSON (schema v1) and writes it under out_dir when one is given (its path in
// extra.python.written). Call with the GIL held. Throws UsageError for arguments found bad only
// on the device (a stream of another device, a case too small to rotate) and rethrows a Python
// exception that a callable raised. A variant whose outputs do not match the reference throws
// CheckFailed when `failures_raise`; otherwise it is left untimed and listed in
// extra.check_failures, as `kbench run` lists its own (CheckFailed still when none is left).
nlohmann::json time_callables(std::vector<TimeRequest> cases, const std::vector<std::string>& argv,
                              bool failures_raise = true);

// A variant's outputs did not match the reference; nothing was timed.
class CheckFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// No CUDA device is visible: timing needs one.
class NoDevice : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kbench::python
