#include "python/callable_run.hpp"

#include <pybind11/pybind11.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <list>
#include <memory>
#include <optional>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
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

// Everything the runner's units of one case point into while they are timed: the op and its
// variants as the harness sees them, the caller's input sets, and one DeviceSet per input set
// that stands for it (the harness names a launch's buffers by set; the buffers are the caller's).
struct CaseSession {
  TimeRequest& request;
  cudaStream_t stream;
  std::optional<py::error_already_set>& raised;  // the run's: the first exception a callable raised
  Problem problem;
  Case c;
  std::vector<Launchable> launchables;
  std::vector<CheckInfo> checks;
  std::vector<bool> passed;                            // parallel to launchables
  std::vector<py::tuple> input_sets;                   // [0]: the checked one
  std::vector<std::unique_ptr<DeviceSet>> set_tokens;  // parallel to input_sets
  // The objects the launches captured into a graph returned, one slot per graph timer and input
  // set, held until the run has ended and its graphs are destroyed (list: stable addresses).
  std::list<std::vector<py::object>> kept;
  nlohmann::json check_notes = nlohmann::json::array();

  CaseSession(TimeRequest& r, cudaStream_t s, std::optional<py::error_already_set>& e)
      : request(r), stream(s), raised(e) {}

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
  // Outside a capture what the callable returns is dropped at once. While the stream is captured
  // into a graph (`slots`: that graph timer's), the graph will write the returned memory at every
  // replay, so the caching allocator of the callable's framework must not hand it to anything
  // else: the objects stay in the slot of their input set until the run ends. A slot's previous
  // objects are dropped just before the next launch on that set, so that the allocator hands
  // the same memory back to it: each input set rewrites its own outputs, as the rotation sets
  // of kbench's own ops do (warm: one set, one output; cold: one per set).
  SetLauncher launcher(std::size_t k, std::vector<py::object>* slots) {
    return [this, k, slots](const DeviceSet& set, cudaStream_t launch_stream) {
      const std::size_t index = set_index(set);
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      if (slots && cudaStreamIsCapturing(launch_stream, &capture) != cudaSuccess) cudaGetLastError();
      py::gil_scoped_acquire gil;
      try {
        if (capture != cudaStreamCaptureStatusActive) {
          request.variants[k].fn(*input_sets[index]);  // the returned outputs are dropped here, under the GIL
          return;
        }
        if (slots->size() < input_sets.size()) slots->resize(input_sets.size());
        (*slots)[index] = py::object();
        (*slots)[index] = request.variants[k].fn(*input_sets[index]);
      } catch (py::error_already_set& e) {
        if (!raised) raised = e;
        throw PythonRaised();
      }
    };
  }
};

// The caller's tolerance: one for every output, or one per output.
std::vector<Tolerance> tolerances(const TimeRequest& r) {
  const std::size_t n = std::max(r.atol.size(), r.rtol.size());
  std::vector<Tolerance> tols;
  for (std::size_t i = 0; i < n; ++i)
    tols.push_back({r.atol[r.atol.size() == 1 ? 0 : i], r.rtol[r.rtol.size() == 1 ? 0 : i], "given by the caller"});
  return tols;
}

nlohmann::json tolerance_json(const TimeRequest& r) {
  const auto one_or_list = [](const std::vector<double>& v) { return v.size() == 1 ? nlohmann::json(v[0]) : nlohmann::json(v); };
  return {{"atol", one_or_list(r.atol)}, {"rtol", one_or_list(r.rtol)}};
}

std::string case_label(const TimeRequest& r) {
  return r.op + " " + std::string(dtype_name(r.dtype)) + " " + shape_string(r.shape);
}

std::string variant_label(const CallableVariant& v) { return "variant '" + v.name + "'"; }

// The check of harness/prepare.hpp check_variant, for a callable: outputs poisoned with NaN, one
// launch compared element by element with the reference, a second launch required to give the
// same bits. The callable is called once before, to find its outputs and to keep first-call work
// (module loads, JIT, autotuning) out of the check. With the GIL held.
CheckInfo check_callable(CaseSession& s, std::size_t k, const std::vector<ArrayView>& reference) {
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

  CheckInfo info = compare_arrays(outputs, reference, tolerances(s.request), s.stream, label);
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

std::vector<ArrayView> reference_views(CaseSession& s) {
  const py::object& ref = s.request.reference;
  if (ref.is_none()) return {};
  const py::object value = PyCallable_Check(ref.ptr()) ? ref(*s.input_sets.front()) : ref;
  return view_arrays(value, "the reference");
}

std::unique_ptr<Timer> make_timer(CaseSession& s, std::size_t k, const std::string& cache, const std::string& timer,
                                  const L2Flusher& flusher, cudaStream_t stream) {
  const bool cold = cache == "cold";
  const DeviceSet& primary = *s.set_tokens.front();
  if (timer == "events") return make_event_timer(s.launcher(k, nullptr), primary, cold ? &flusher : nullptr, stream);
  if (timer == "cupti") return make_cupti_timer(s.launcher(k, nullptr), primary, cold ? &flusher : nullptr, stream);
  std::vector<const DeviceSet*> sets{&primary};
  if (cold)
    for (std::size_t i = 1; i < s.set_tokens.size(); ++i) sets.push_back(s.set_tokens[i].get());
  const SetLauncher launch = s.launcher(k, &s.kept.emplace_back());
  const int count = graph_launch_count(estimate_launch_us(launch, primary, stream), static_cast<int>(sets.size()));
  // Relaxed: a framework's callable may allocate while captured (PyTorch's ops return new
  // tensors; its caching allocator may call cudaMalloc) or launch from another thread (autograd's
  // backward runs on PyTorch's device thread), which the thread-local mode refuses.
  return make_graph_timer(launch, sets, count, cold, stream, cudaStreamCaptureModeRelaxed);
}

// Cold graph timing cannot flush between captured launches, so consecutive launches rotate
// through input sets totalling at least 3x L2 (as the runner's add_rotation_sets does for
// registered ops), each made by the caller's inputs callable, before the run (a case that cannot
// be rotated is refused before any timing). With the GIL held.
void make_rotation_sets(CaseSession& s, std::size_t l2_bytes) {
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

// <dir>/<experiment>-<tag>-<UTC time>-<random>.json, as write_result names and writes a result
// (atomically, never overwriting) but with the caller's tag: the PyTorch side's files are
// <experiment>-torch-..., beside kbench's own of the same experiment.
std::string write_tagged(const Result& result, const std::string& dir, const std::string& tag) {
  if (tag.empty()) return write_result(result, dir).string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create directory " + dir + ": " + ec.message());
  const std::string text = result_text(to_json(result));
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::filesystem::path target = std::filesystem::path(dir) / (result.experiment + "-" + tag + "-" +
                                                                       utc_now(/*compact=*/true) + "-" + random_hex6() + ".json");
    if (write_file_atomically(target, text, Overwrite::never)) return target.string();
  }
  throw UsageError("cannot find a free result name in " + dir);
}

nlohmann::json case_settings(const TimeRequest& r) {
  nlohmann::json variants = nlohmann::json::array();
  for (const CallableVariant& v : r.variants) variants.push_back({{"name", v.name}, {"baseline", v.baseline}});
  nlohmann::json j = {{"op", r.op}, {"dtype", dtype_name(r.dtype)}, {"shape", r.shape}, {"bytes", r.bytes},
                      {"flops", r.flops}, {"variants", variants}};
  if (!r.params.empty()) j["params"] = r.params;
  return j;
}

// Checks every variant of one case (with the GIL held); a failure is thrown or listed.
void check_case(CaseSession& s, bool failures_raise, nlohmann::json& failures) {
  const TimeRequest& r = s.request;
  s.c.op = r.op;
  s.c.dtype = r.dtype;
  s.c.shape = r.shape;
  s.c.params = r.params;
  s.problem.name = r.op;
  s.problem.bytes = [b = r.bytes](const Case&) { return b; };
  s.problem.flops = [f = r.flops](const Case&) { return f; };
  for (const CallableVariant& v : r.variants) {
    Launchable l;
    l.name = v.name;
    l.baseline = v.baseline;
    s.launchables.push_back(std::move(l));
  }
  s.add_input_set();
  {
    const std::vector<ArrayView> reference = reference_views(s);
    for (std::size_t k = 0; k < r.variants.size(); ++k) {
      const CheckInfo info = check_callable(s, k, reference);
      s.checks.push_back(info);
      s.passed.push_back(info.passed);
      if (info.passed) continue;
      const std::string why = "check failed: " + case_label(r) + " " + variant_label(r.variants[k]) + ": " + info.detail;
      if (failures_raise) throw CheckFailed(why + "; nothing was timed");
      spdlog::warn("{}; it is not timed", why);
      failures.push_back({{"op", r.op}, {"variant", r.variants[k].name}, {"dtype", dtype_name(r.dtype)},
                          {"shape", r.shape}, {"detail", info.detail}});
    }
  }
  s.request.reference = py::none();  // the reference (float64, often) is not needed past the check
}

}  // namespace

nlohmann::json time_callables(std::vector<TimeRequest> cases, const std::vector<std::string>& argv,
                              bool failures_raise) {
  const TimeRequest& run = cases.front();  // the run's options are the same in every case
  const int device = chosen_device(run);
  KB_CUDA(cudaSetDevice(device));
  const auto stream = reinterpret_cast<cudaStream_t>(run.stream);
  check_stream(stream, device);

  std::optional<py::error_already_set> raised;
  std::list<CaseSession> sessions;
  nlohmann::json failures = nlohmann::json::array();
  for (TimeRequest& r : cases) check_case(sessions.emplace_back(r, stream, raised), failures_raise, failures);
  std::size_t timed = 0;
  for (const CaseSession& s : sessions) timed += static_cast<std::size_t>(std::count(s.passed.begin(), s.passed.end(), true));
  if (timed == 0) throw CheckFailed("check failed: every variant of every case failed its check; nothing was timed");
  if (std::count(run.caches.begin(), run.caches.end(), "cold") > 0 &&
      std::count(run.timers.begin(), run.timers.end(), "graph") > 0) {
    int l2_bytes = 0;
    KB_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    for (CaseSession& s : sessions)
      if (std::count(s.passed.begin(), s.passed.end(), true) > 0) make_rotation_sets(s, static_cast<std::size_t>(l2_bytes));
  }

  Experiment e;
  e.name = run.experiment;
  e.sources = {"src/python/"};
  nlohmann::json case_list = nlohmann::json::array();
  for (const TimeRequest& r : cases) {
    e.own_op_sources[r.op] = {};
    case_list.push_back(case_settings(r));
  }
  // One case: its settings at the top, as kbench.time has always recorded them; several: a list.
  e.settings = cases.size() == 1 ? case_list[0] : nlohmann::json{{"cases", case_list}};
  e.settings.update({{"caches", run.caches}, {"timers", run.timers}, {"visits", run.visits}, {"samples", run.samples},
                     {"clock_floor", run.clock_floor}, {"caller", run.settings}});
  if (!run.tool.empty()) e.meta["tool"] = run.tool;
  e.how.caches = run.caches;
  e.how.timers = run.timers;
  e.how.visits = run.visits;
  e.how.samples = run.samples;
  e.how.seed = run.seed;
  e.how.device = device;
  e.how.clock_floor = run.clock_floor;
  e.stream = stream;
  e.build_units = [&sessions, &run](cudaStream_t st, const L2Flusher& flusher) {
    std::vector<Unit> units;
    for (CaseSession& s : sessions)
      for (const auto& cache : run.caches)
        for (const auto& timer : run.timers) {
          Unit u;
          u.problem = &s.problem;
          u.c = s.c;
          u.cache = cache;
          u.timer = timer;
          for (std::size_t k = 0; k < s.launchables.size(); ++k) {
            if (!s.passed[k]) continue;
            u.variants.push_back(&s.launchables[k]);
            u.checks.push_back(s.checks[k]);
            u.timers.push_back(make_timer(s, k, cache, timer, flusher, st));
          }
          if (!u.variants.empty()) units.push_back(std::move(u));
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
  if (python_raised && raised) throw py::error_already_set(*raised);
  for (const auto& f : failures) result.extra["check_failures"].push_back(f);
  nlohmann::json python = {{"stream", run.stream}};
  nlohmann::json per_case = nlohmann::json::array();
  for (const CaseSession& s : sessions)
    per_case.push_back({{"op", s.request.op}, {"dtype", dtype_name(s.request.dtype)}, {"shape", s.request.shape},
                        {"input_sets", s.input_sets.size()}, {"tolerance", tolerance_json(s.request)},
                        {"checks", s.check_notes}});
  if (cases.size() == 1) {  // as kbench.time has always written it
    for (const char* key : {"input_sets", "tolerance", "checks"}) python[key] = per_case[0][key];
  } else {
    python["cases"] = per_case;
  }
  result.extra["python"] = python;
  if (run.out_dir) result.extra["python"]["written"] = write_tagged(result, *run.out_dir, run.tag);
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
