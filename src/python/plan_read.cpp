#include "python/plan_read.hpp"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/json_schema.hpp"
#include "core/text.hpp"

namespace py = pybind11;

namespace kbench::python {

namespace {

// The binary beside the module (both land in the build folder), else `kbench` on PATH.
std::string kbench_binary() {
  const py::module_ os = py::module_::import("os");
  const py::object folder = os.attr("path").attr("dirname")(py::module_::import("kbench").attr("__file__"));
  const py::object beside = os.attr("path").attr("join")(folder, "kbench");
  if (py::cast<bool>(os.attr("access")(beside, os.attr("X_OK")))) return py::str(beside);
  const py::object on_path = py::module_::import("shutil").attr("which")("kbench");
  if (on_path.is_none())
    throw UsageError("kbench.plan: no kbench binary beside the module (" + std::string(py::str(folder)) +
                     ") or on PATH");
  return py::str(on_path);
}

std::string text_of(const py::handle& value, const std::string& what) {
  if (!py::isinstance<py::str>(value) && !py::isinstance<py::int_>(value))
    throw UsageError("kbench.plan: " + what + " must be a string or a whole number, got " +
                     printable(std::string(py::repr(value)), 80));
  return py::str(value);
}

}  // namespace

py::object read_plan(const py::object& config, const py::kwargs& kwargs) {
  if (!py::isinstance<py::str>(config) && !py::hasattr(config, "__fspath__"))
    throw UsageError("kbench.plan: config must be a file path, got " + printable(std::string(py::repr(config)), 80));
  std::vector<std::string> argv{kbench_binary(), "--quiet", "run", "--config",
                                py::str(py::module_::import("os").attr("fspath")(config)),
                                "--dry-run", "--format", "json", "--no-roofline"};
  for (const auto& [key, value] : kwargs) {
    const std::string k = py::str(key);
    if (value.is_none()) continue;
    if (k == "ops" || k == "dtypes") {  // lists, as --op and --dtype repeated
      if (py::isinstance<py::str>(value)) throw UsageError("kbench.plan: " + k + " must be a list of names");
      for (const auto& item : value) argv.insert(argv.end(), {k == "ops" ? "--op" : "--dtype", text_of(item, k)});
    } else if (k == "cache" || k == "timer" || k == "visits" || k == "samples" || k == "seed") {
      argv.insert(argv.end(), {"--" + k, text_of(value, k)});
    } else {
      throw UsageError("kbench.plan: unknown argument '" + printable(k, 80) + "'");
    }
  }
  py::list args;
  for (const std::string& a : argv) args.append(a);
  py::object done;
  try {
    done = py::module_::import("subprocess").attr("run")(args, py::arg("capture_output") = true, py::arg("text") = true);
  } catch (py::error_already_set& e) {  // found, but the system cannot run it (not a program, no permission)
    if (!e.matches(PyExc_OSError)) throw;
    throw UsageError("kbench.plan: cannot run " + printable(argv[0], 200) + ": " +
                     printable(std::string(py::str(e.value())), 200));
  }
  if (py::cast<int>(done.attr("returncode")) != 0) {
    // kbench's last stderr line is its one-line error; its prefix off, so the caller can add its own.
    std::string err = py::str(done.attr("stderr").attr("strip")());
    err = err.substr(err.find_last_of('\n') == std::string::npos ? 0 : err.find_last_of('\n') + 1);
    for (const std::string prefix : {"kbench: ", "error: "})
      if (err.starts_with(prefix)) err.erase(0, prefix.size());
    throw UsageError(err.empty() ? "kbench exited with status " + std::string(py::str(done.attr("returncode"))) : err);
  }
  // The plan's contract (src/record/plan.schema.json): a binary of another version that names a
  // key otherwise is one line here, not a KeyError deep in the caller.
  const std::string out = py::str(done.attr("stdout"));
  const nlohmann::json plan = nlohmann::json::parse(out, nullptr, false);
  if (plan.is_discarded()) throw UsageError("kbench.plan: kbench's plan is not JSON (" + printable(out, 80) + ")");
  JsonSchema::embedded("src/record/plan.schema.json").validate(plan, "kbench.plan: kbench's plan");
  return py::module_::import("json").attr("loads")(done.attr("stdout"));
}

}  // namespace kbench::python
