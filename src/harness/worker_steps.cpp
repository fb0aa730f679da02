#include "harness/worker_steps.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"

namespace kbench {

namespace {

// The steps file, opened once for appending; -1 when this process reports no steps.
int steps_fd() {
  static const int fd = [] {
    const char* path = std::getenv(kWorkerStepsVariable);
    if (path == nullptr || *path == '\0') return -1;
    return ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  }();
  return fd;
}

// Writes the step unless it is the one written last: a visit's many samples of one variant are
// one step, and the parent's deadline counts from the last change.
void write_step(const WorkerStep& step) {
  const int fd = steps_fd();
  if (fd < 0) return;
  static std::string last;
  std::string line = step_line(step) + "\n";
  if (line == last) return;
  // One write of a short line: appended whole, and in the file once write returns, whatever
  // ends the process after it (SIGKILL included).
  if (::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())) last = std::move(line);
}

}  // namespace

std::string step_line(const WorkerStep& s) {
  nlohmann::json j = {{"phase", s.phase}};
  if (!s.case_label.empty()) j.update({{"case", s.case_label}, {"op", s.op}, {"dtype", s.dtype}, {"shape", s.shape}});
  if (!s.variant.empty()) j["variant"] = s.variant;
  return j.dump();
}

std::optional<WorkerStep> parse_step_line(const std::string& line) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("phase") || !j["phase"].is_string()) return std::nullopt;
  WorkerStep s;
  try {
    s.phase = j["phase"].get<std::string>();
    s.case_label = j.value("case", "");
    s.op = j.value("op", "");
    s.dtype = j.value("dtype", "");
    if (j.contains("shape")) s.shape = j["shape"].get<Shape>();
    s.variant = j.value("variant", "");
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return s;
}

std::optional<WorkerStep> last_step(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::optional<WorkerStep> last;
  while (std::getline(in, line))
    if (auto step = parse_step_line(line)) last = std::move(step);
  return last;
}

bool reporting_steps() { return steps_fd() >= 0; }

void report_step(const std::string& phase) {
  if (steps_fd() < 0) return;
  write_step({phase, "", "", "", {}, ""});
}

void report_variant_step(const std::string& phase, const Case& c, const std::string& variant) {
  if (steps_fd() < 0) return;
  write_step({phase, case_label(c), c.op, std::string(dtype_name(c.dtype)), c.shape, variant});
}

ExcludedVariants read_excluded(const std::filesystem::path& file) {
  ExcludedVariants out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (const auto step = parse_step_line(line); step && step->names_variant()) out.insert({step->case_label, step->variant});
  return out;
}

ExcludedVariants excluded_variants() {
  const char* path = std::getenv(kWorkerExcludeVariable);
  if (path == nullptr || *path == '\0') return {};
  return read_excluded(path);
}

void write_excluded(const std::filesystem::path& file, const std::vector<WorkerStep>& steps) {
  std::ofstream out(file, std::ios::trunc);
  for (const WorkerStep& s : steps) out << step_line(s) << "\n";
}

}  // namespace kbench
