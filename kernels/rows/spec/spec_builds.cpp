#include "kernels/rows/spec/spec_builds.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "core/errors.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/spec/spec_internal.hpp"
#include "kernels/rows/spec/spec_shape.hpp"

namespace kbench::rows::spec {

namespace {

SpecOp spec_of(std::string_view op) {
  if (op == "softmax") return softmax_spec();
  if (op == "rmsnorm") return rmsnorm_spec();
  throw std::invalid_argument("'" + std::string(op) + "' has no spec builds");
}

std::string spec_width_list() {
  std::string s;
  for (int w : kSpecWidths) s += (s.empty() ? "" : ", ") + std::to_string(w);
  return s;
}

}  // namespace

const char* build_name(Build b) {
  switch (b) {
    case Build::runtime: return "runtime";
    case Build::template_vecs: return "template_vecs";
    case Build::template_width: return "template_width";
  }
  return "?";
}

const std::vector<std::string>& spec_ops() {
  static const std::vector<std::string> ops{"softmax", "rmsnorm"};
  return ops;
}

bool has_spec_builds(std::string_view op) {
  return std::find(spec_ops().begin(), spec_ops().end(), op) != spec_ops().end();
}

std::string build_unsupported(const Case& c, Build b) {
  if (!has_spec_builds(c.op)) return "'" + c.op + "' has no spec builds";
  if (std::string why = row_case_problem(c); !why.empty()) return why;
  const RowRules& rules = row_rules(c.op);
  const std::int64_t width = cols_of(c);
  if (std::string why = plan_unsupported(Forced::resident_any, width, c.dtype, rules); !why.empty())
    return "no resident plan: " + why;
  // The resident plan does not depend on the device's limits.
  const RowPlan plan = forced_plan(Forced::resident_any, rows_of(c), width, c.dtype, DeviceLimits{}, rules);
  if (plan.threads != plan.lanes || plan.lanes < 64)
    return "the spec builds run block plans (a row per block); this row takes " + describe(plan);
  if (b == Build::template_width && !is_spec_width(width))
    return "no width build for width " + std::to_string(width) + " (built for " + spec_width_list() + ")";
  return {};
}

const Launchable& build_launchable(std::string_view op, Build b) {
  // Every op's builds, made once (thread-safe static initialisation) and never moved.
  static const std::map<std::pair<std::string, Build>, Launchable> built = [] {
    std::map<std::pair<std::string, Build>, Launchable> m;
    for (const std::string& name : spec_ops())
      for (const Build build : kBuilds) {
        Launchable& l = m[{name, build}];
        l.name = build_name(build);
        l.launch = [s = spec_of(name), build](const LaunchArgs& a) { s.launch(build, a); };
      }
    return m;
  }();
  const auto it = built.find({std::string(op), b});
  if (it == built.end()) throw std::invalid_argument("'" + std::string(op) + "' has no spec builds");
  return it->second;
}

KernelAttributes build_attributes(const Case& c, Build b) {
  if (std::string why = build_unsupported(c, b); !why.empty())
    throw std::invalid_argument(std::string(build_name(b)) + " cannot run " + case_label(c) + ": " + why);
  return spec_of(c.op).attributes(b, c);
}

RowPlan spec_plan(const Case& c) { return plan_for(c, row_rules(c.op), Forced::resident_any); }

bool case_rows_aligned(const Case& c) {
  const std::int64_t stride = c.row_stride > 0 ? c.row_stride : cols_of(c);
  const auto bytes = static_cast<std::int64_t>(dtype_size(c.dtype));
  return stride * bytes % 16 == 0 && cols_of(c) * bytes % 16 == 0;
}

KernelAttributes read_attributes(const void* kernel, std::string name, const RowPlan& plan) {
  cudaFuncAttributes fa{};
  KB_CUDA(cudaFuncGetAttributes(&fa, kernel));
  int blocks = 0;
  KB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, plan.threads, 0));
  KernelAttributes a;
  a.kernel = std::move(name);
  a.plan = describe(plan);
  a.threads = plan.threads;
  a.registers = fa.numRegs;
  a.local_bytes = fa.localSizeBytes;
  a.shared_bytes = fa.sharedSizeBytes;
  a.const_bytes = fa.constSizeBytes;
  a.max_threads_per_block = fa.maxThreadsPerBlock;
  a.blocks_per_sm = blocks;
  a.binary_version = fa.binaryVersion;
  return a;
}

}  // namespace kbench::rows::spec
