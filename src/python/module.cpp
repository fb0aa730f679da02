// The Python module `kbench` (pybind11): kbench's harness timing Python callables. See
// docs/python.md; callable_run.hpp says how a callable becomes a variant the runner times.
#include <pybind11/pybind11.h>

#include <filesystem>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "harness/progress.hpp"
#include "harness/runner.hpp"
#include "python/callable_run.hpp"
#include "python/output_check.hpp"
#include "python/plan_read.hpp"
#include "python/sweep_config_read.hpp"
#include "python/time_args.hpp"
#include "record/result.hpp"

namespace py = pybind11;
using namespace kbench;

namespace {

// nlohmann's JSON to Python values and back, through Python's json module: results are small and
// this keeps every number's type (an int stays int) as the result file has it.
py::object to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

nlohmann::json from_python(const py::handle& value, const std::string& what) {
  try {
    return nlohmann::json::parse(py::module_::import("json").attr("dumps")(value).cast<std::string>());
  } catch (const py::error_already_set&) {
    throw UsageError(what + " is not JSON: not a result");
  }
}

std::vector<std::string> python_argv() {
  std::vector<std::string> argv{"python"};
  const py::module_ sys = py::module_::import("sys");
  if (py::hasattr(sys, "argv"))
    for (const auto& a : sys.attr("argv")) argv.push_back(py::str(a));
  return argv;
}

constexpr const char* kModuleDoc = R"(kbench from Python: time any callable that enqueues GPU work on the
caller's CUDA stream (PyTorch, Triton, CuPy) with kbench's own harness: warm-up, L2 flush (cold),
rotation of input sets (cold graph), randomized interleaved visits, the events, graph and cupti
timers, the GPU load record, and schema-v1 results. The module imports no framework.

    kbench.time(fn, *, stream, op, dtype, shape, bytes, ...) -> dict   (a result, schema v1)
    kbench.time_cases(cases, *, stream, ...) -> dict                   (several cases, one run)
    kbench.compare(output, reference, *, atol, rtol) -> dict           (the check alone)
    kbench.read_sweep_config(path) -> dict                             (a config, as kbench run reads it)
    kbench.plan(config, *, ops=None, ...) -> dict                      (its cases, bytes and flops, as kbench plans them)
    kbench.validate_result(result)                                     (a dict or a file path)
    kbench.CheckError                                                  (outputs off the reference)

See docs/python.md.)";

constexpr const char* kTimeDoc = R"(time(fn, *, stream, op, dtype, shape, bytes, flops=0, inputs=None, reference=None, atol=0, rtol=0, params=None, cache='cold', timer='events', visits=3, samples=3, seed=1, clock_floor=0.9, device=None, variant='python', baseline=False, experiment='python', out=None, tag=None, tool=None, settings=None) -> dict

Checks fn against the reference, then times it with kbench's harness and returns the result
(schema v1, as a dict: its 'records' hold one record per variant, cache mode and timer).

fn          a callable that enqueues its GPU work on `stream` and returns its output (a tensor-like,
            or a tuple of them), called as fn(*set) with an input set from `inputs`, or fn();
            or a dict {variant name: callable} timed side by side in the same visits. It may
            return new tensors (PyTorch's ops do): while a graph is captured the graph timer
            keeps what each launch returned until the run ends, so that the memory it writes
            is handed to nothing else.
stream      the caller's CUDA stream: an integer cudaStream_t (torch.cuda.current_stream().cuda_stream)
            or an object with one in .cuda_stream. fn must enqueue on it. The graph timer needs a
            stream of its own (not the legacy default stream, 0).
op, dtype, shape   what is computed, for the records: dtype 'float32', 'float16' or 'bfloat16'.
bytes       the bytes the op must move (each input read once, each output written once): GB/s.
flops       the flops it must do (TFLOP/s); 0 for a memory-bound op.
inputs      a callable returning one input set (a tuple of fn's arguments). Cold graph timing calls it
            until the sets cover 3x L2 (sets of `bytes` each) and rotates through them.
reference   the expected output: a tensor-like (or a tuple of them), or a callable taking an input
            set that returns it. Tensor-likes speak DLPack (__dlpack__) or __cuda_array_interface__.
atol, rtol  the element tolerance, |out - ref| <= atol + rtol |ref|; required with a reference.
            Each a number for every output, or a list with one per output.
            Before timing, fn's outputs are filled with NaN (where fn writes the same memory each
            call, i.e. out=), fn is called and every element compared, then called again and
            required to give the same bits. A failure raises kbench.CheckError; nothing is timed.
params      a dict {name: number} of the op's parameters, stated in the records (eps, ...).
cache       'cold' (L2 flushed before each sample; input sets rotated in graph replay), 'warm',
            'both', or a list.
timer       'events', 'graph', 'cupti', 'all', or a list.
visits, samples   visits to the case in shuffled order from `seed`; samples per variant per visit.
clock_floor a visit that begins below this share of the warm SM clock is discarded and taken again.
device      the CUDA device (default: the current one); the stream must be on it.
variant, baseline  the variant's name and whether it is a baseline; with a dict fn, baseline names
            the dict's baseline variants.
experiment  the result's experiment name; out: a folder to write <experiment>-<time>-<id>.json into.
tag         a word added to the file's name: <experiment>-<tag>-<time>-<id>.json.
tool        the program that defined the callables, recorded as meta.tool.
settings    a dict of JSON values recorded in meta.settings.caller.

Bad arguments raise ValueError (one line); no GPU raises RuntimeError; an exception fn raises is
raised as it is. The GIL is released while the harness waits on the GPU and taken for each call.)";

constexpr const char* kTimeCasesDoc = R"(time_cases(cases, *, stream, cache='cold', timer='events', visits=3, samples=3, seed=1, clock_floor=0.9, device=None, experiment='python', out=None, tag=None, tool=None, settings=None) -> dict

Several cases in one run: every variant of every case is checked first, then the units of all
cases (one per case, cache mode and timer) are visited in one shuffled order, with one warm-up
and one set of timer floors. Returns one result (schema v1) holding every case's records.

cases       a non-empty list of dicts, one per case, each with the keys kbench.time takes for a
            case: fn (a callable or a dict of them by variant name), op, dtype, shape, bytes,
            and optionally flops, inputs, reference, atol, rtol, params, variant, baseline. Two
            cases may not share op, dtype, shape and params.
the rest    the run's options, as kbench.time takes them, the same for every case.

A variant that fails its check is not timed and is listed in the result's extra.check_failures
(with a warning), as `kbench run` lists its own; kbench.CheckError only when every variant of
every case failed. Bad arguments raise ValueError naming the case ("cases[2]: bytes ...").)";

constexpr const char* kCompareDoc = R"(compare(output, reference, *, atol=0, rtol=0, stream=0) -> dict

The check kbench.time makes before timing, alone: every element of output (a tensor-like, or a
tuple of them; DLPack or __cuda_array_interface__, on the host or a GPU) against reference,
|out - ref| <= atol + rtol |ref|, a NaN or infinity required where the reference has one. Returns
{'passed', 'max_err', 'tolerance', 'detail'} as a record's 'check' holds them (detail: the first
element off, or ''). Device memory is read on `stream` after it drains. ValueError when the
outputs and the reference differ in count or element count.)";

constexpr const char* kReadConfigDoc = R"(read_sweep_config(path) -> dict

A sweep config (configs/*.json) read and checked as `kbench run --config` reads it: the same
JSON parser and the schema compiled in (configs/schema/sweep.schema.json), the same one-line
messages (the ops' names are not checked: the module knows no registry). Returns {'experiment', 'description', 'cache', 'timer', 'visits', 'samples', 'seed',
'cases'}: cache and timer expanded to lists ('both' and 'all' resolved, kbench's defaults where
the config has none), cases as the config lists them, each {'op', 'dtypes', 'shapes', 'variants',
'params'} with dtypes ['float32'] where it names none. Raises ValueError (one line) for an
unreadable file, bad JSON or a config the schema refuses.)";

constexpr const char* kPlanDoc = R"(plan(config, *, ops=None, dtypes=None, cache=None, timer=None, visits=None, samples=None, seed=None) -> dict

A sweep config's cases as `kbench run` plans them, from the kbench binary beside the module (else
`kbench` on PATH): `kbench run --config CONFIG --dry-run --format json --no-roofline`, the other
arguments passed as its --op, --dtype, --cache, --timer, --visits, --samples and --seed. Returns
{'schema': 'kbench/plan/v1', 'experiment', 'description', 'cache', 'timer', 'visits', 'samples',
'seed', 'cases'}, each case {'op', 'dtype', 'shape', 'params', 'bytes', 'flops', 'variants',
'skipped'}: every parameter of the op (defaults filled in) and the bytes and flops kbench's own
records count for it, to pass to kbench.time_cases as they are. Raises ValueError with kbench's
own line for a config or an option kbench refuses (an unknown op among them), or when the plan
does not pass src/record/plan.schema.json (a binary of another version).)";

constexpr const char* kValidateDoc = R"(validate_result(result) -> None

Checks a result against kbench's result schema (src/record/result.schema.json, compiled into the
module): `result` is a dict or the path of a result file (.json or .json.gz). Raises ValueError
with one line naming the first problem by its JSON pointer.)";

}  // namespace

PYBIND11_MODULE(kbench, m) {
  py::options options;
  options.disable_function_signatures();  // each docstring's first line is the signature as documented
  m.doc() = kModuleDoc;
  // The harness's log lines (warnings, progress) to stderr, as the kbench binary's: a script's
  // stdout is its own.
  kbench::log_to_stderr();
  // (pybind11 keeps the exception type; a static of our own would outlive the interpreter.)
  auto& check_error = py::register_exception<python::CheckFailed>(m, "CheckError", PyExc_RuntimeError);
  check_error.doc() = "A variant's outputs did not match the reference within the tolerance; nothing was timed.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UsageError& e) {
      PyErr_SetString(PyExc_ValueError, printable(e.what(), 2000).c_str());
    } catch (const Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, printable(e.what(), 2000).c_str());
    } catch (const python::NoDevice& e) {
      PyErr_SetString(PyExc_RuntimeError, printable(e.what(), 2000).c_str());
    } catch (const CudaError& e) {
      PyErr_SetString(PyExc_RuntimeError, printable(e.what(), 2000).c_str());
    }
  });

  m.def(
      "time",
      [](const py::object& fn, const py::kwargs& kwargs) {
        const python::TimeRequest request = python::parse_time_args(fn, kwargs);
        return to_python(python::time_callables({request}, python_argv()));
      },
      py::arg("fn"), kTimeDoc);

  m.def(
      "time_cases",
      [](const py::object& cases, const py::kwargs& kwargs) {
        std::vector<python::TimeRequest> requests = python::parse_time_cases_args(cases, kwargs);
        return to_python(python::time_callables(std::move(requests), python_argv(), /*failures_raise=*/false));
      },
      py::arg("cases"), kTimeCasesDoc);

  m.def(
      "compare",
      [](const py::object& output, const py::object& reference, const py::kwargs& kwargs) {
        py::dict args;
        for (const auto& [key, value] : kwargs) {
          const std::string k = py::str(key);
          if (k != "atol" && k != "rtol" && k != "stream")
            throw UsageError("kbench.compare: unknown argument '" + printable(k, 80) + "'");
          args[key] = value;
        }
        const python::CompareRequest request = python::parse_compare_args(args);
        const CheckInfo info = python::compare_arrays(python::view_arrays(output, "the output"),
                                                      python::view_arrays(reference, "the reference"),
                                                      {request.tolerance}, request.stream, "kbench.compare");
        return to_python({{"passed", info.passed}, {"max_err", info.max_err}, {"tolerance", info.tolerance},
                          {"detail", info.detail}});
      },
      py::arg("output"), py::arg("reference"), kCompareDoc);

  m.def(
      "read_sweep_config",
      [](const py::object& path) {
        if (!py::isinstance<py::str>(path) && !py::hasattr(path, "__fspath__"))
          throw UsageError("kbench.read_sweep_config: path must be a file path, got " +
                           printable(std::string(py::repr(path)), 80));
        const std::string file = py::str(py::module_::import("os").attr("fspath")(path));
        return to_python(python::read_sweep_config(file));
      },
      py::arg("path"), kReadConfigDoc);

  m.def("plan", &python::read_plan, py::arg("config"), kPlanDoc);

  m.def(
      "validate_result",
      [](const py::object& result) {
        if (py::isinstance<py::dict>(result)) {
          validate_result_json(from_python(result, "the result"), "the result");
          return;
        }
        if (py::isinstance<py::str>(result) || py::hasattr(result, "__fspath__")) {
          const std::string path = py::str(py::module_::import("os").attr("fspath")(result));
          read_result(std::filesystem::path(path));
          return;
        }
        throw UsageError("kbench.validate_result: result must be a dict or a file path, got " +
                         printable(std::string(py::repr(result)), 80));
      },
      py::arg("result"), kValidateDoc);

  // The method's constants the module times with, for scripts that report them.
  py::dict constants;
  constants["graph_target_us"] = kGraphTargetUs;
  constants["graph_launches_min"] = kMinGraphLaunches;
  constants["graph_launches_max"] = kMaxGraphLaunches;
  constants["clock_floor"] = kDefaultClockFloor;
  constants["rotation_sets_max"] = python::kMaxRotationSets;
  constants["schema"] = kResultSchema;
  m.attr("constants") = constants;
}
