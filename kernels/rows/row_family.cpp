#include "kernels/rows/row_family.hpp"

#include <map>
#include <stdexcept>

#include "kernels/all_ops.hpp"
#include "kernels/rows/row_contract.hpp"

namespace kbench::rows {

namespace {

struct RowOpEntry {
  RowRules rules;
  PlanLauncher launch = nullptr;
  PlanWorkspace workspace = nullptr;
};

// Filled while the registry is built (single-threaded, under registry()'s static init).
std::map<std::string, RowOpEntry, std::less<>>& rules_table() {
  static std::map<std::string, RowOpEntry, std::less<>> table;
  return table;
}

const RowOpEntry& entry(std::string_view op) {
  registry();
  const auto it = rules_table().find(op);
  if (it == rules_table().end()) throw std::invalid_argument("'" + std::string(op) + "' is not a row op");
  return it->second;
}

}  // namespace

RowPlan plan_for(const Case& c, const RowRules& rules, std::optional<Forced> forced) {
  const DeviceLimits& dev = current_device_limits();
  if (forced) return forced_plan(*forced, rows_of(c), cols_of(c), c.dtype, dev, rules);
  return row_plan(rows_of(c), cols_of(c), c.dtype, dev, rules);
}

void register_row_op(Registry& r, const RowOpDefinition& def) {
  r.add_op(def.op);
  rules_table()[def.op.name] = RowOpEntry{def.rules, def.launch, def.workspace};
  for (const PlanVariant& plan : def.plans) {
    const RowRules rules = def.rules;
    const std::optional<Forced> forced = plan.forced;
    const PlanLauncher launch = def.launch;
    const bool serial = plan.serial;
    Variant v = make_variant(def.op.name, plan.name, plan.summary, [rules, forced, launch, serial](const LaunchArgs& a) {
      RowPlan p = plan_for(a.c, rules, forced);
      p.serial = serial;
      launch(p, a);
    });
    v.unsupported = [rules, forced](const Case& c) {
      std::string why = row_case_problem(c);
      if (why.empty() && forced) why = plan_unsupported(*forced, cols_of(c), c.dtype, rules);
      return why;
    };
    const PlanWorkspace workspace = def.workspace;
    v.workspace_bytes = [rules, forced, workspace](const Case& c) {
      if (!row_case_problem(c).empty() || rows_of(c) == 0 || cols_of(c) == 0) return std::size_t{0};
      const RowPlan plan = plan_for(c, rules, forced);
      return workspace ? workspace(plan, c, rules) : split_workspace_bytes(plan, rows_of(c), rules);
    };
    r.add_variant(std::move(v));
  }
}

Variant row_baseline(const std::string& op, std::string name, std::string summary,
                     std::function<std::size_t(const Case&)> workspace,
                     std::function<void(const LaunchArgs&)> launch) {
  Variant v = make_variant(op, std::move(name), std::move(summary), std::move(launch));
  v.baseline = true;
  v.unsupported = row_case_problem;
  v.workspace_bytes = [workspace = std::move(workspace)](const Case& c) {
    return row_case_problem(c).empty() ? workspace(c) : std::size_t{0};
  };
  return v;
}

const RowRules& row_rules(std::string_view op) { return entry(op).rules; }

Launchable plan_launchable(std::string_view op, const RowPlan& plan) {
  const RowOpEntry& e = entry(op);
  Launchable l;
  l.name = grid_plan_name(plan, e.rules);
  const RowRules rules = e.rules;
  const PlanLauncher launch = e.launch;
  const PlanWorkspace workspace = e.workspace;
  l.launch = [plan, launch](const LaunchArgs& a) { launch(plan, a); };
  l.workspace_bytes = [plan, rules, workspace](const Case& c) {
    if (!row_case_problem(c).empty() || rows_of(c) == 0 || cols_of(c) == 0) return std::size_t{0};
    return workspace ? workspace(plan, c, rules) : split_workspace_bytes(plan, rows_of(c), rules);
  };
  return l;
}

}  // namespace kbench::rows
