#include "experiments/spec.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/errors.hpp"
#include "experiments/spec_analysis.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/rows/spec/spec_builds.hpp"

namespace kbench {

namespace {

using nlohmann::json;
namespace spec = rows::spec;

std::string spec_op_list() {
  std::string s;
  for (const auto& op : spec::spec_ops()) s += (s.empty() ? "" : ", ") + op;
  return s;
}

// Every (op, dtype, shape) of the settings with the builds that can run it; a build that
// cannot is a skip with its reason.
std::vector<MeasuredCase> plan_cases(const SpecSettings& s) {
  std::vector<MeasuredCase> out;
  for (const auto& name : s.ops) {
    const Op& op = registry().op(name);
    for (DType d : s.dtypes)
      for (const Shape& shape : s.shapes) {
        MeasuredCase mc{&op, make_case(op, d, shape), {}, {}};
        for (spec::Build b : spec::kBuilds) {
          const std::string why = spec::build_unsupported(mc.c, b);
          if (why.empty()) mc.variants.push_back(&spec::build_launchable(name, b));
          else mc.skipped.push_back(std::string(spec::build_name(b)) + ": " + why);
        }
        out.push_back(std::move(mc));
      }
  }
  return out;
}

json attributes_json(const Case& c, spec::Build b, const spec::KernelAttributes& a) {
  return {{"op", c.op},
          {"dtype", dtype_name(c.dtype)},
          {"shape", c.shape},
          {"build", spec::build_name(b)},
          {"kernel", a.kernel},
          {"plan", a.plan},
          {"threads", a.threads},
          {"registers", a.registers},
          {"local_bytes", a.local_bytes},
          {"shared_bytes", a.shared_bytes},
          {"const_bytes", a.const_bytes},
          {"max_threads_per_block", a.max_threads_per_block},
          {"blocks_per_sm", a.blocks_per_sm},
          {"binary_version", a.binary_version}};
}

json settings_json(const SpecSettings& s) {
  json dtypes = json::array();
  for (DType d : s.dtypes) dtypes.push_back(dtype_name(d));
  return {{"ops", s.ops},         {"dtypes", dtypes},       {"shapes", s.shapes},
          {"cache", s.caches},    {"timer", s.timers},      {"visits", s.visits},
          {"samples", s.samples}, {"device", s.device},     {"threshold", s.threshold}};
}

// An op, dtype or shape given twice would be timed twice over.
template <class T, class Name>
void require_distinct(const std::vector<T>& list, const char* what, Name name) {
  for (std::size_t i = 0; i < list.size(); ++i)
    if (std::find(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(i), list[i]) !=
        list.begin() + static_cast<std::ptrdiff_t>(i))
      throw UsageError(std::string("spec: ") + what + " '" + name(list[i]) + "' is given twice");
}

}  // namespace

void validate_spec_settings(const SpecSettings& s) {
  if (s.ops.empty()) throw UsageError("spec needs an op (" + spec_op_list() + ")");
  require_distinct(s.ops, "op", [](const std::string& op) { return op; });
  require_distinct(s.dtypes, "dtype", [](DType d) { return std::string(dtype_name(d)); });
  require_distinct(s.shapes, "shape", [](const Shape& sh) { return shape_string(sh); });
  for (const auto& op : s.ops)
    if (!spec::has_spec_builds(op))
      throw UsageError("'" + op + "' has no specialised build; kbench spec covers " + spec_op_list());
  if (s.dtypes.empty() || s.shapes.empty()) throw UsageError("spec needs at least one dtype and one shape");
  if (!(s.threshold > 0 && s.threshold < 1)) throw UsageError("--threshold must lie between 0 and 1");
  if (s.visits < 1 || s.samples < 1) throw UsageError("--visits and --samples must be at least 1");
  const std::vector<MeasuredCase> cases = plan_cases(s);  // make_case refuses a shape of another rank
  if (std::all_of(cases.begin(), cases.end(), [](const MeasuredCase& mc) { return mc.variants.empty(); }))
    throw UsageError("no spec build can run these cases (" + case_label(cases.front().c) + ": " +
                     cases.front().skipped.front() + ")");
}

Experiment spec_experiment(const SpecSettings& s) {
  validate_spec_settings(s);
  Experiment e;
  e.name = "spec";
  e.sources = {"experiments/spec"};  // spec.* and spec_analysis.*
  e.settings = settings_json(s);
  e.how = Measurement{s.caches, s.timers, s.visits, s.samples, s.seed, s.device};
  e.cases = plan_cases(s);
  for (const auto& mc : e.cases)
    for (const auto& skip : mc.skipped) spdlog::info("{}: {}", case_label(mc.c), skip);
  // The attributes are read on the GPU after the visits; nothing is timed here.
  std::vector<std::pair<Case, std::vector<spec::Build>>> kernels;
  for (const auto& mc : e.cases) {
    std::vector<spec::Build> builds;
    for (spec::Build b : spec::kBuilds)
      if (spec::build_unsupported(mc.c, b).empty()) builds.push_back(b);
    kernels.emplace_back(mc.c, builds);
  }
  e.time_own = [kernels](cudaStream_t, Result& r) {
    json list = json::array();
    for (const auto& [c, builds] : kernels)
      for (spec::Build b : builds) list.push_back(attributes_json(c, b, spec::build_attributes(c, b)));
    r.extra["spec"]["kernels"] = list;
  };
  const double threshold = s.threshold;
  e.analyse = [threshold](Result& r) { r.extra["spec"]["analysis"] = analyse_spec_result(r, threshold); };
  return e;
}

}  // namespace kbench
