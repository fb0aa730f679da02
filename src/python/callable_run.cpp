#include "python/callable_run.hpp"

#include <pybind11/pybind11.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <memory>
#include <sstream>

#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "harness/cupti_timer.hpp"
#include "harness/runner.hpp"
#include "harness/timers.hpp"
#include "python/array_view.hpp"
#include "python/output_check.hpp"
#include "record/result.hpp"

namespace py = pybind11;

namespace kbench::python {

namespace {

// Thrown inside a launch when the callable raised; the Python exception itself is kept in the
// session and raised again once the runner has unwound and the GIL is held.
struct PythonRaised : std::runtime_error {
  PythonRaised() : std::runtime_error("a Python callable raised an exception") {}
};

// Everything the runner's units point into while they are timed: the op and its variants as the
// harness sees them, the caller's input sets, and one DeviceSet per input set that stands for it
// (the harness names a launch's buffers by set; the buffers are the caller's).
struct Session {
  const TimeRequest& request;
  cudaStream_t stream;
  Problem problem;
  Case c;
  std::vector<Launchable> launchables;
  std::vector<CheckInfo> checks;
  std::vector<py::tuple> input_sets;          // [0]: the checked one
  std::vector<std::unique_ptr<DeviceSet>> set_tokens;  // parallel to input_sets
  std::optional<py::error_already_set> raised;
  nlohmann::json check_notes = nlohmann::json::array();

  Session(const TimeRequest& r, cudaStream_t s) : request(r), stream(s) {}

  // With the GIL held.
  void add_input_set() {
    py::tuple args;
    if (!request.inputs.is_none()) {
      py::object set = request.inputs();
      args = py::isinstance<py::tuple>(set) ? py::reinterpret_borrow<py::tuple>(set) : py::make_tuple(set);
    }
    input_sets.push_back(args);
    set_tokens.push_back(std::make_unique<DeviceSet>());
  }
  std::size_t set_index(const DeviceSet& set) const {
    for (std::size_t i = 0; i < set_tokens.size(); ++i)
      if (set_tokens[i].get() == &set) return i;
    return 0;
  }

  // The launch the harness's timers call: variant k on one input set, the GIL taken for the call.
  SetLauncher launcher(std::size_t k) {
    return [this, k](const DeviceSet& set, cudaStream_t) {
      const std::size_t index = set_index(set);
      py::gil_scoped_acquire gil;
      try {
        request.variants[k].fn(*input_sets[index]);  // the returned outputs are dropped here, under the GIL
      } catch (py::error_already_set& e) {
        raised = e;
        throw PythonRaised();
      }
    };
  }
};

std::string variant_label(const CallableVariant& v) { return "variant '" + v.name + "'"; }

// The check of harness/prepare.hpp check_variant, for a callable: outputs poisoned with NaN, one
// launch compared element by element with the reference, a second launch required to give the
// same bits. The callable is called once before, to find its outputs and to keep first-call work
// (module loads, JIT, autotuning) out of the check. With the GIL held.
CheckInfo check_callable(Session& s, std::size_t k, const std::vector<ArrayView>& reference) {
  const CallableVariant& v = s.request.variants[k];
  const py::tuple& args = s.input_sets.front();
  const std::string label = variant_label(v);
  const py::object first = v.fn(*args);
  if (reference.empty()) {
    CheckInfo info;
    info.passed = true;
    info.detail = "not checked: no reference was given";
    s.check_notes.push_back({{"variant", v.name}, {"checked", false}});
    return info;
  }
  if (first.is_none())
    throw UsageError(label + " returned None: return its output (a tensor, or a tuple of them) so that it can be checked");
  const std::vector<ArrayView> first_views = view_arrays(first, label + "'s output");
  for (const ArrayView& out : first_views) poison(out, s.stream);
  const py::object result = v.fn(*args);
  const std::vector<ArrayView> outputs = view_arrays(result, label + "'s output");
  // Poisoning reaches an output only where the callable writes into the same memory each call
  // (out=); one that returns new memory is compared as it is, and the result says which it was.
  bool poisoned = outputs.size() == first_views.size();
  for (std::size_t i = 0; poisoned && i < outputs.size(); ++i) poisoned = outputs[i].data == first_views[i].data;

  const Tolerance tol{s.request.atol, s.request.rtol, "given by the caller"};
  CheckInfo info = compare_arrays(outputs, reference, tol, s.stream, label);
  std::vector<std::vector<std::byte>> bits;
  for (const ArrayView& out : outputs) bits.push_back(read_span(out, s.stream));
  if (info.passed) {  // timed launches repeat on the same inputs: the same bits, each time
    for (const ArrayView& out : outputs) poison(out, s.stream);
    const py::object again = v.fn(*args);
    const std::vector<ArrayView> second = view_arrays(again, label + "'s output");
    for (std::size_t i = 0; i < outputs.size() && info.passed; ++i)
      if (second.size() != outputs.size() || read_span(second[i], s.stream) != bits[i]) {
        info.passed = false;
        info.share = INFINITY;
        info.detail = "a second launch on the same inputs gave different output bits";
      }
  }
  s.check_notes.push_back({{"variant", v.name}, {"checked", true}, {"outputs", outputs.size()}, {"poisoned", poisoned}});
  return info;
}

std::vector<ArrayView> reference_views(Session& s) {
  const py::object& ref = s.request.reference;
  if (ref.is_none()) return {};
  const py::object value = PyCallable_Check(ref.ptr()) ? ref(*s.input_sets.front()) : ref;
  return view_arrays(value, "the reference");
}

std::unique_ptr<Timer> make_timer(Session& s, std::size_t k, const std::string& cache, const std::string& timer,
                                  const L2Flusher& flusher, cudaStream_t stream) {
  const bool cold = cache == "cold";
  const SetLauncher launch = s.launcher(k);
  const DeviceSet& primary = *s.set_tokens.front();
  if (timer == "events") return make_event_timer(launch, primary, cold ? &flusher : nullptr, stream);
  if (timer == "cupti") return make_cupti_timer(launch, primary, cold ? &flusher : nullptr, stream);
  std::vector<const DeviceSet*> sets{&primary};
  if (cold)
    for (std::size_t i = 1; i < s.set_tokens.size(); ++i) sets.push_back(s.set_tokens[i].get());
  const int count = graph_launch_count(estimate_launch_us(launch, primary, stream), static_cast<int>(sets.size()));
  return make_graph_timer(launch, sets, count, cold, stream);
}

// Cold graph timing cannot flush between captured launches, so consecutive launches rotate
// through input sets totalling at least 3x L2 (as the runner's add_rotation_sets does for
// registered ops), each made by the caller's inputs callable, before the run (a case that cannot
// be rotated is refused before any timing). With the GIL held.
void make_rotation_sets(Session& s, std::size_t l2_bytes) {
  const double per_set = std::max(s.request.bytes, 1.0);
  const auto needed = static_cast<std::size_t>(std::ceil(3.0 * static_cast<double>(l2_bytes) / per_set));
  if (needed <= 1) return;
  if (s.request.inputs.is_none())
    throw UsageError("cold graph timing of a case that moves less than 3x L2 (" + std::to_string(3 * l2_bytes) +
                     " bytes) rotates through input sets: give inputs=, a callable that makes one set");
  if (needed > kMaxRotationSets)
    throw UsageError("cold graph timing would need " + std::to_string(needed) + " input sets of " +
                     std::to_string(static_cast<long long>(per_set)) + " bytes to cover 3x L2 (at most " +
                     std::to_string(kMaxRotationSets) + "): time this case warm, or cold with the events or cupti timer");
  while (s.input_sets.size() < needed) s.add_input_set();
}

// Restores Python's handlers of SIGINT and SIGTERM, which the runner replaces with its own
// (core/interrupt.hpp), when the run ends however it ends.
class SignalHandlersKept {
 public:
  SignalHandlersKept() {
    sigaction(SIGINT, nullptr, &int_);
    sigaction(SIGTERM, nullptr, &term_);
  }
  ~SignalHandlersKept() {
    sigaction(SIGINT, &int_, nullptr);
    sigaction(SIGTERM, &term_, nullptr);
  }

 private:
  struct sigaction int_ {}, term_ {};
};

int chosen_device(const TimeRequest& request) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw NoDevice(std::string("kbench.time needs a CUDA device and none is visible (") +
                   (err != cudaSuccess ? cudaGetErrorString(err) : "no devices") + ")");
  }
  if (request.device) {
    if (*request.device >= count)
      throw UsageError("device " + std::to_string(*request.device) + " does not exist: " + std::to_string(count) +
                       " CUDA device(s) are visible");
    return *request.device;
  }
  int current = 0;
  KB_CUDA(cudaGetDevice(&current));
  return current;
}

// The stream must be one of this process's, on the device timed: a handle from elsewhere would
// fail (or worse, time another device) deep inside the run.
void check_stream(cudaStream_t stream, int device) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return;
  if (cudaStreamQuery(stream) == cudaErrorInvalidResourceHandle) {
    cudaGetLastError();
    throw UsageError("stream " + std::to_string(reinterpret_cast<std::uintptr_t>(stream)) +
                     " is not a CUDA stream of this process");
  }
  cudaGetLastError();
  int stream_device = -1;
  if (cudaStreamGetDevice(stream, &stream_device) == cudaSuccess && stream_device != device)
    throw UsageError("the stream belongs to device " + std::to_string(stream_device) + ", the run is on device " +
                     std::to_string(device) + ": pass device=" + std::to_string(stream_device));
  cudaGetLastError();
}

}  // namespace

nlohmann::json time_callables(const TimeRequest& request, const std::vector<std::string>& argv) {
  const int device = chosen_device(request);
  KB_CUDA(cudaSetDevice(device));
  const auto stream = reinterpret_cast<cudaStream_t>(request.stream);
  check_stream(stream, device);

  Session s(request, stream);
  s.c.op = request.op;
  s.c.dtype = request.dtype;
  s.c.shape = request.shape;
  s.problem.name = request.op;
  s.problem.bytes = [b = request.bytes](const Case&) { return b; };
  s.problem.flops = [f = request.flops](const Case&) { return f; };
  for (const CallableVariant& v : request.variants) {
    Launchable l;
    l.name = v.name;
    l.baseline = v.baseline;
    s.launchables.push_back(std::move(l));
  }
  s.add_input_set();
  const std::vector<ArrayView> reference = reference_views(s);
  for (std::size_t k = 0; k < request.variants.size(); ++k) {
    const CheckInfo info = check_callable(s, k, reference);
    if (!info.passed)
      throw CheckFailed("check failed: " + request.op + " " + std::string(dtype_name(request.dtype)) + " " +
                        shape_string(request.shape) + " " + variant_label(request.variants[k]) + ": " + info.detail +
                        "; nothing was timed");
    s.checks.push_back(info);
  }
  if (std::count(request.caches.begin(), request.caches.end(), "cold") > 0 &&
      std::count(request.timers.begin(), request.timers.end(), "graph") > 0) {
    int l2_bytes = 0;
    KB_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    make_rotation_sets(s, static_cast<std::size_t>(l2_bytes));
  }

  Experiment e;
  e.name = request.experiment;
  e.sources = {"src/python/"};
  e.own_op_sources[request.op] = {};
  nlohmann::json variants = nlohmann::json::array();
  for (const CallableVariant& v : request.variants) variants.push_back({{"name", v.name}, {"baseline", v.baseline}});
  e.settings = {{"op", request.op},         {"dtype", dtype_name(request.dtype)}, {"shape", request.shape},
                {"bytes", request.bytes},   {"flops", request.flops},             {"variants", variants},
                {"caches", request.caches}, {"timers", request.timers},           {"visits", request.visits},
                {"samples", request.samples}, {"clock_floor", request.clock_floor}, {"caller", request.settings}};
  e.how.caches = request.caches;
  e.how.timers = request.timers;
  e.how.visits = request.visits;
  e.how.samples = request.samples;
  e.how.seed = request.seed;
  e.how.device = device;
  e.how.clock_floor = request.clock_floor;
  e.stream = stream;
  e.build_units = [&s, &request](cudaStream_t st, const L2Flusher& flusher) {
    std::vector<Unit> units;
    for (const auto& cache : request.caches)
      for (const auto& timer : request.timers) {
        Unit u;
        u.problem = &s.problem;
        u.c = s.c;
        u.cache = cache;
        u.timer = timer;
        for (const Launchable& l : s.launchables) u.variants.push_back(&l);
        u.checks = s.checks;
        for (std::size_t k = 0; k < s.launchables.size(); ++k) u.timers.push_back(make_timer(s, k, cache, timer, flusher, st));
        units.push_back(std::move(u));
      }
    return units;
  };

  Result result;
  bool python_raised = false;
  {
    SignalHandlersKept handlers;
    py::gil_scoped_release nogil;
    try {
      result = run_experiment(e, argv);
    } catch (const PythonRaised&) {
      python_raised = true;
    }
  }
  if (python_raised && s.raised) throw py::error_already_set(*s.raised);
  result.extra["python"] = {{"stream", request.stream}, {"input_sets", s.input_sets.size()},
                            {"tolerance", {{"atol", request.atol}, {"rtol", request.rtol}}},
                            {"checks", s.check_notes}};
  if (request.out_dir) result.extra["python"]["written"] = write_result(result, *request.out_dir).string();
  // A SIGINT during the visits ended them early; the result holds what was measured (marked
  // incomplete in meta) and is written; Python then sees the KeyboardInterrupt it expects.
  if (interrupt_signal() == SIGTERM) {  // Python's handler is back: SIGTERM's own action follows
    clear_interrupt();
    std::raise(SIGTERM);
  }
  if (interrupt_signal() == SIGINT) {
    clear_interrupt();
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return to_json(result);
}

}  // namespace kbench::python
