#include "python/time_args.hpp"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace py = pybind11;

namespace kbench::python {

namespace {

constexpr long long kMaxSeed = (1LL << 53) - 1;  // a JSON number keeps it exactly
constexpr long long kMaxVisits = 100000;

// A case's own arguments, and the run's (the same for every case of kbench.time_cases).
const std::set<std::string> kCaseKeys = {"fn", "op", "dtype", "shape", "bytes", "flops", "inputs", "reference",
                                         "atol", "rtol", "variant", "baseline", "params"};
const std::set<std::string> kRunKeys = {"stream", "cache", "timer", "visits", "samples", "seed", "clock_floor",
                                        "device", "experiment", "out", "tag", "tool", "settings"};

// The function whose arguments are being checked, for the messages ("kbench.time").
std::string g_function = "kbench.time";

[[noreturn]] void bad(const std::string& name, const std::string& must, const py::handle& got) {
  std::string shown = got ? std::string(py::repr(got)) : "nothing";
  throw UsageError(g_function + ": " + name + " must be " + must + ", got " + printable(shown, 80));
}

py::object arg(const py::dict& kwargs, const char* name) {
  return kwargs.contains(name) ? py::reinterpret_borrow<py::object>(kwargs[name]) : py::none();
}

bool is_int(const py::handle& v) { return py::isinstance<py::int_>(v) && !py::isinstance<py::bool_>(v); }
bool is_number(const py::handle& v) { return (py::isinstance<py::float_>(v) || is_int(v)); }

long long whole(const py::dict& kwargs, const char* name, long long lo, long long hi, long long fallback) {
  const py::object v = arg(kwargs, name);
  if (v.is_none()) return fallback;
  const std::string must = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (!is_int(v)) bad(name, must, v);
  long long x = 0;
  try {
    x = v.cast<long long>();
  } catch (const py::cast_error&) {
    bad(name, must, v);
  }
  if (x < lo || x > hi) bad(name, must, v);
  return x;
}

double number(const py::dict& kwargs, const char* name, double lo, double hi, double fallback, bool required = false) {
  const py::object v = arg(kwargs, name);
  const std::string must = "a number from " + format_number("%g", lo) + (std::isinf(hi) ? " up" : " to " + format_number("%g", hi));
  if (v.is_none()) {
    if (required) bad(name, must, py::none());
    return fallback;
  }
  if (!is_number(v)) bad(name, must, v);
  const double x = v.cast<double>();
  if (!std::isfinite(x) || x < lo || x > hi) bad(name, must, v);
  return x;
}

std::string text(const py::dict& kwargs, const char* name, const std::string& fallback, bool required = false) {
  const py::object v = arg(kwargs, name);
  if (v.is_none() && !required) return fallback;
  if (!py::isinstance<py::str>(v)) bad(name, "a string", v);
  const std::string s = v.cast<std::string>();
  if (s.empty() || s.size() > 200 || printable(s) != s) bad(name, "a non-empty printable string of at most 200 bytes", v);
  return s;
}

// atol or rtol: a number from 0 up for every output, or a non-empty list of them, one per output.
std::vector<double> tolerances(const py::dict& kwargs, const char* name) {
  const py::object v = arg(kwargs, name);
  if (!(py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v))) return {number(kwargs, name, 0, HUGE_VAL, 0)};
  const std::string must = "a number from 0 up, or a list of them (one per output)";
  if (py::len(v) == 0) bad(name, must, v);
  std::vector<double> values;
  for (const auto& item : v) {
    if (!is_number(item)) bad(name, must, v);
    const double x = item.cast<double>();
    if (!std::isfinite(x) || x < 0) bad(name, must, v);
    values.push_back(x);
  }
  return values;
}

// The op's parameters: {name: number}, into the records (as kbench's records state an op's).
std::map<std::string, double> params_of(const py::dict& kwargs) {
  const py::object v = arg(kwargs, "params");
  std::map<std::string, double> params;
  if (v.is_none()) return params;
  const std::string must = "a dict of the op's parameters, each a name and a finite number";
  if (!py::isinstance<py::dict>(v)) bad("params", must, v);
  for (const auto& [key, value] : py::cast<py::dict>(v)) {
    if (!py::isinstance<py::str>(key) || key.cast<std::string>().empty() || !is_number(value)) bad("params", must, v);
    const double x = value.cast<double>();
    if (!std::isfinite(x)) bad("params", must, v);
    params[key.cast<std::string>()] = x;
  }
  return params;
}

// A name for a file: lowercase letters, digits, '_' and '-'.
std::string file_word(const py::dict& kwargs, const char* name, const std::string& fallback) {
  const std::string s = text(kwargs, name, fallback);
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    bad(name, "a name of lowercase letters, digits, '_' and '-' (it names the result file)", arg(kwargs, name));
  return s;
}

// One name from `allowed`, `all_name` for all of them, or a list of names.
std::vector<std::string> choices(const py::dict& kwargs, const char* name, const std::vector<std::string>& allowed,
                                 const std::string& all_name, const std::string& fallback) {
  std::string must = "one of";
  for (const auto& a : allowed) must += " '" + a + "'";
  must += ", '" + all_name + "' or a list of them";
  const py::object v = arg(kwargs, name);
  if (v.is_none()) return {fallback};
  std::vector<std::string> picked;
  const auto take = [&](const py::handle& item) {
    if (!py::isinstance<py::str>(item)) bad(name, must, v);
    const std::string s = item.cast<std::string>();
    if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) bad(name, must, v);
    if (std::find(picked.begin(), picked.end(), s) == picked.end()) picked.push_back(s);
  };
  if (py::isinstance<py::str>(v) && v.cast<std::string>() == all_name) return allowed;
  if (py::isinstance<py::str>(v)) take(v);
  else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v))
    for (const auto& item : v) take(item);
  else
    bad(name, must, v);
  if (picked.empty()) bad(name, must, v);
  return picked;
}

// The stream: an integer cudaStream_t handle, or an object with one in `cuda_stream` (a
// torch.cuda.Stream, a CuPy stream's `ptr` is not: pass the integer).
std::uintptr_t stream_handle(const py::dict& kwargs) {
  py::object v = arg(kwargs, "stream");
  const std::string must = "the caller's CUDA stream: an integer cudaStream_t handle (torch.cuda.current_stream()"
                           ".cuda_stream) or an object with one in .cuda_stream";
  if (v.is_none()) bad("stream", must, v);
  if (!is_int(v) && py::hasattr(v, "cuda_stream")) v = v.attr("cuda_stream");
  if (!is_int(v)) bad("stream", must, v);
  try {
    return v.cast<std::uintptr_t>();
  } catch (const py::cast_error&) {
    bad("stream", must, v);
  }
}

Shape shape_of(const py::dict& kwargs) {
  const py::object v = arg(kwargs, "shape");
  const std::string must = "a list of dimensions, each a whole number from 0 to 2^53 - 1";
  if (!(py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) || py::len(v) == 0) bad("shape", must, v);
  Shape shape;
  for (const auto& d : v) {
    if (!is_int(d)) bad("shape", must, v);
    long long x = -1;
    try {
      x = d.cast<long long>();
    } catch (const py::cast_error&) {
    }
    if (x < 0 || x > kMaxSeed) bad("shape", must, v);
    shape.push_back(x);
  }
  return shape;
}

std::vector<CallableVariant> variants_of(const py::object& fn, const py::dict& kwargs) {
  const py::object baseline = arg(kwargs, "baseline");
  std::vector<CallableVariant> variants;
  if (py::isinstance<py::dict>(fn)) {
    if (py::len(fn) == 0) bad("fn", "a callable or a non-empty dict of callables by variant name", fn);
    std::set<std::string> baselines;
    if (!baseline.is_none()) {
      const std::string must = "the names of the dict's variants that are baselines (a string or a list of them)";
      const py::object names = py::isinstance<py::str>(baseline) ? py::object(py::make_tuple(baseline)) : baseline;
      if (!(py::isinstance<py::list>(names) || py::isinstance<py::tuple>(names))) bad("baseline", must, baseline);
      for (const auto& n : names) {
        if (!py::isinstance<py::str>(n) || !py::cast<py::dict>(fn).contains(n)) bad("baseline", must, baseline);
        baselines.insert(n.cast<std::string>());
      }
    }
    for (const auto& [key, value] : py::cast<py::dict>(fn)) {
      py::dict one;
      one["variant"] = key;
      const std::string name = text(one, "variant", "");
      if (!PyCallable_Check(value.ptr())) bad("fn['" + name + "']", "a callable", value);
      variants.push_back({name, py::reinterpret_borrow<py::object>(value), baselines.count(name) > 0});
    }
    if (kwargs.contains("variant")) bad("variant", "left out when fn is a dict (its keys name the variants)", kwargs["variant"]);
    return variants;
  }
  if (!PyCallable_Check(fn.ptr())) bad("fn", "a callable or a non-empty dict of callables by variant name", fn);
  if (!baseline.is_none() && !py::isinstance<py::bool_>(baseline)) bad("baseline", "True or False", baseline);
  variants.push_back({text(kwargs, "variant", "python"), fn, !baseline.is_none() && baseline.cast<bool>()});
  return variants;
}

}  // namespace

CompareRequest parse_compare_args(const py::dict& kwargs) {
  g_function = "kbench.compare";
  CompareRequest r;
  r.tolerance = {number(kwargs, "atol", 0, HUGE_VAL, 0), number(kwargs, "rtol", 0, HUGE_VAL, 0), "given by the caller"};
  if (kwargs.contains("stream")) r.stream = reinterpret_cast<cudaStream_t>(stream_handle(kwargs));
  return r;
}

namespace {

// Every argument of one case but the unknown ones (checked by the callers).
TimeRequest parse_case(const py::object& fn, const py::dict& kwargs) {
  TimeRequest r;
  r.variants = variants_of(fn, kwargs);
  r.stream = stream_handle(kwargs);
  r.op = text(kwargs, "op", "", true);
  const std::string dtype = text(kwargs, "dtype", "", true);
  if (dtype != "float32" && dtype != "float16" && dtype != "bfloat16")
    bad("dtype", "'float32', 'float16' or 'bfloat16' (the records' dtype)", arg(kwargs, "dtype"));
  r.dtype = parse_dtype(dtype);
  r.shape = shape_of(kwargs);
  r.bytes = number(kwargs, "bytes", 0, HUGE_VAL, 0, true);
  r.flops = number(kwargs, "flops", 0, HUGE_VAL, 0);
  r.inputs = arg(kwargs, "inputs");
  if (!r.inputs.is_none() && !PyCallable_Check(r.inputs.ptr()))
    bad("inputs", "a callable that returns one input set (a tuple of the arguments fn takes)", r.inputs);
  r.reference = arg(kwargs, "reference");
  r.atol = tolerances(kwargs, "atol");
  r.rtol = tolerances(kwargs, "rtol");
  if (r.atol.size() > 1 && r.rtol.size() > 1 && r.atol.size() != r.rtol.size())
    bad("rtol", "as long a list as atol (" + std::to_string(r.atol.size()) + ", one per output) or one number",
        arg(kwargs, "rtol"));
  if (!r.reference.is_none() && !kwargs.contains("atol") && !kwargs.contains("rtol"))
    bad("atol or rtol", "given with a reference (the element tolerance: |out - ref| <= atol + rtol |ref|)", py::none());
  r.params = params_of(kwargs);
  r.caches = choices(kwargs, "cache", {"cold", "warm"}, "both", "cold");
  r.timers = choices(kwargs, "timer", {"events", "graph", "cupti"}, "all", "events");
  r.visits = static_cast<int>(whole(kwargs, "visits", 1, kMaxVisits, kDefaultVisits));
  r.samples = static_cast<int>(whole(kwargs, "samples", 1, kMaxVisits, kDefaultSamples));
  r.seed = static_cast<std::uint64_t>(whole(kwargs, "seed", 0, kMaxSeed, 1));
  r.clock_floor = number(kwargs, "clock_floor", 0, 1, 0.9);
  if (!arg(kwargs, "device").is_none()) r.device = static_cast<int>(whole(kwargs, "device", 0, 1023, 0));
  r.experiment = file_word(kwargs, "experiment", "python");
  if (kwargs.contains("tag")) r.tag = file_word(kwargs, "tag", "");
  if (kwargs.contains("tool")) r.tool = text(kwargs, "tool", "");
  const py::object out = arg(kwargs, "out");
  if (!out.is_none()) {
    if (!py::isinstance<py::str>(out) && !py::hasattr(out, "__fspath__")) bad("out", "a folder path (str or os.PathLike)", out);
    r.out_dir = py::str(py::module_::import("os").attr("fspath")(out)).cast<std::string>();
    if (r.out_dir->empty()) bad("out", "a folder path (str or os.PathLike)", out);
  }
  const py::object settings = arg(kwargs, "settings");
  if (!settings.is_none()) {
    if (!py::isinstance<py::dict>(settings)) bad("settings", "a dict of JSON values (into the result's meta.settings)", settings);
    try {
      const std::string dumped = py::module_::import("json").attr("dumps")(settings).cast<std::string>();
      r.settings = nlohmann::json::parse(dumped);
    } catch (const py::error_already_set&) {
      bad("settings", "a dict of JSON values (into the result's meta.settings)", settings);
    }
  }
  const bool graph = std::count(r.timers.begin(), r.timers.end(), "graph") > 0;
  if (graph && (r.stream == 0 || r.stream == 1))
    throw UsageError(g_function + ": the graph timer captures the stream, and the legacy default stream (handle " +
                     std::to_string(r.stream) + ") cannot be captured: run on a stream of its own "
                     "(with torch.cuda.stream(torch.cuda.Stream()): ...)");
  return r;
}

}  // namespace

TimeRequest parse_time_args(const py::object& fn, const py::dict& kwargs) {
  g_function = "kbench.time";
  for (const auto& [key, value] : kwargs) {
    const std::string k = py::str(key);
    if (k == "fn" || (!kCaseKeys.count(k) && !kRunKeys.count(k)))
      throw UsageError("kbench.time: unknown argument '" + printable(k, 80) + "'");
  }
  return parse_case(fn, kwargs);
}

std::vector<TimeRequest> parse_time_cases_args(const py::object& cases, const py::dict& kwargs) {
  g_function = "kbench.time_cases";
  for (const auto& [key, value] : kwargs) {
    const std::string k = py::str(key);
    if (kCaseKeys.count(k))
      throw UsageError("kbench.time_cases: '" + k + "' is a case's own argument: give it in each case's dict");
    if (!kRunKeys.count(k)) throw UsageError("kbench.time_cases: unknown argument '" + printable(k, 80) + "'");
  }
  const std::string must = "a non-empty list of dicts, one per case (fn, op, dtype, shape, bytes, ...)";
  if (!(py::isinstance<py::list>(cases) || py::isinstance<py::tuple>(cases)) || py::len(cases) == 0)
    bad("cases", must, cases);
  std::vector<TimeRequest> requests;
  std::size_t i = 0;
  for (const auto& c : cases) {
    const std::string at = "cases[" + std::to_string(i) + "]";
    g_function = "kbench.time_cases";
    if (!py::isinstance<py::dict>(c)) bad(at, "a dict: the case's fn, op, dtype, shape, bytes, ...", c);
    py::dict merged;
    for (const auto& [key, value] : kwargs) merged[key] = value;
    for (const auto& [key, value] : py::cast<py::dict>(c)) {
      const std::string k = py::str(key);
      if (k != "fn" && !kCaseKeys.count(k))
        throw UsageError("kbench.time_cases: " + at + ": unknown key '" + printable(k, 80) + "'" +
                         (kRunKeys.count(k) ? " (a run's argument: give it to time_cases once)" : ""));
      merged[key] = value;
    }
    g_function = "kbench.time_cases: " + at;
    const py::dict& case_dict = py::cast<py::dict>(c);
    if (!case_dict.contains("fn")) bad("fn", "a callable or a non-empty dict of callables by variant name", py::none());
    requests.push_back(parse_case(case_dict["fn"], merged));
    const TimeRequest& r = requests.back();
    for (std::size_t j = 0; j + 1 < requests.size(); ++j) {
      const TimeRequest& o = requests[j];
      if (o.op == r.op && o.dtype == r.dtype && o.shape == r.shape && o.params == r.params)
        throw UsageError(g_function + ": the same op, dtype, shape and params as cases[" + std::to_string(j) +
                         "]: its records could not be told apart");
    }
    ++i;
  }
  return requests;
}

}  // namespace kbench::python
