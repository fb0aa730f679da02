// What the row ops share beyond their plans: an op registered with one variant per plan (the
// automatic choice and each plan forced by name) and its baselines. Each op keeps its own
// RowRules, launcher and baselines beside its kernels (row_sum.cu, softmax.cu, ...) and calls
// register_row_op from its register function, so a new row op adds its own files and changes
// nothing here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/rows/row_plan.hpp"
#include "registry/registry.hpp"

namespace kbench::rows {

// Runs a plan of the op on the launch's buffers (the contracts are checked inside).
using PlanLauncher = void (*)(const RowPlan&, const LaunchArgs&);
// The workspace a plan needs for a case (zeroed once, reused by every launch).
using PlanWorkspace = std::size_t (*)(const RowPlan&, const Case&, const RowRules&);

// One named plan of an op; `forced` empty is the automatic choice (row_plan). `serial` hands the
// op's launcher the plan with RowPlan::serial set: the same plan, its second kernel launched
// after the first ends (the controls split_serial and looped_serial), with the plan's contracts
// and workspace.
struct PlanVariant {
  std::string name;
  std::optional<Forced> forced;
  std::string summary;
  bool serial = false;
};

struct RowOpDefinition {
  Op op;  // what is computed (the op's *_op.cpp)
  RowRules rules;
  PlanLauncher launch;
  std::vector<PlanVariant> plans;
  PlanWorkspace workspace = nullptr;  // null: split_workspace_bytes (only the split plan has any)
};

// Adds the op and a variant per plan, and keeps the rules for row_rules().
void register_row_op(Registry& r, const RowOpDefinition& def);

// A baseline of a row op (CUB, eager): it takes every row case and needs `workspace(c)` bytes.
Variant row_baseline(const std::string& op, std::string name, std::string summary,
                     std::function<std::size_t(const Case&)> workspace,
                     std::function<void(const LaunchArgs&)> launch);

// The plan a variant runs for a case on the current device (forced empty: automatic).
RowPlan plan_for(const Case& c, const RowRules& rules, std::optional<Forced> forced);

// A concrete plan of a registered row op as something the runner can check and time: named
// plan_name(plan), launched through the op's own plan launcher (its contracts checked there),
// with the workspace that plan needs. The grid (experiments/grid.hpp) times these.
Launchable plan_launchable(std::string_view op, const RowPlan& plan);

// The rules of a registered row op (the registry is built first); throws std::invalid_argument
// for a name that is not one.
const RowRules& row_rules(std::string_view op);

}  // namespace kbench::rows
