// What a worker process (cli/workers.hpp: `--devices`, `--isolate`) tells the parent that
// started it, through two files the parent names in its environment:
//
// - KBENCH_WORKER_STEPS: the worker appends one JSON line each time it starts another step
//   (preparing a case, checking a variant, building a variant's timer, a variant's launches in
//   a visit, the visit's floor, warm-up, ...), only when the step differs from the last one.
//   When the worker dies (an illegal address leaves its CUDA context unusable: the next CUDA
//   call fails and the process ends) or stops writing for longer than the deadline (a kernel
//   that never ends; the parent kills it), the last line names the variant and case it was
//   running. Every step that launches a variant synchronises before the next step begins
//   (check_variant, Timer::prime and sample_us), so that an asynchronous fault is raised within
//   the step that caused it, not in the next one.
// - KBENCH_WORKER_EXCLUDE: the (case, variant) pairs that faulted in an earlier attempt, one
//   JSON line each, which this attempt neither checks nor times.
//
// Without the variables (a run in one process) nothing is written or read, and nothing in the
// measurement changes: the steps are host calls between timed regions.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/problem.hpp"

namespace kbench {

inline constexpr const char* kWorkerStepsVariable = "KBENCH_WORKER_STEPS";
inline constexpr const char* kWorkerExcludeVariable = "KBENCH_WORKER_EXCLUDE";

// One step: a phase ("prepare", "check", "timer", "visit", "floor", "warm-up", ...) and, when
// the step runs one variant of one case, the case (its label, op, dtype, shape) and the variant.
struct WorkerStep {
  std::string phase;
  std::string case_label;  // empty: a step of no case
  std::string op, dtype;
  Shape shape;
  std::string variant;  // empty: a step of no variant
  bool names_variant() const { return !case_label.empty() && !variant.empty(); }
};

// The step as one JSON line (no newline), and back; nullopt for a line that is not one (a
// line cut short when the worker died while writing it).
std::string step_line(const WorkerStep& step);
std::optional<WorkerStep> parse_step_line(const std::string& line);

// The last whole step in a steps file; nullopt when it has none.
std::optional<WorkerStep> last_step(const std::filesystem::path& file);

// The worker's side: whether this process reports steps (KBENCH_WORKER_STEPS is set), and the
// reports, each written with one write(2) so that it is on disk however the process ends.
bool reporting_steps();
void report_step(const std::string& phase);
void report_variant_step(const std::string& phase, const Case& c, const std::string& variant);

// The (case label, variant) pairs to leave out: read from the file KBENCH_WORKER_EXCLUDE names
// (empty when unset); written by the parent with write_excluded.
using ExcludedVariants = std::set<std::pair<std::string, std::string>>;
ExcludedVariants excluded_variants();
ExcludedVariants read_excluded(const std::filesystem::path& file);
void write_excluded(const std::filesystem::path& file, const std::vector<WorkerStep>& steps);

}  // namespace kbench
