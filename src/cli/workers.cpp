#include "cli/workers.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "core/subprocess.hpp"
#include "core/text.hpp"

namespace kbench {

namespace fs = std::filesystem;

namespace {

// How often the parent looks at its workers: they run for minutes, and a worker that died
// should be started again within a moment.
constexpr auto kPollInterval = std::chrono::milliseconds(50);

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  for (std::size_t at = text.find(separator); at != std::string::npos; at = text.find(separator, begin)) {
    out.push_back(text.substr(begin, at - begin));
    begin = at + 1;
  }
  out.push_back(text.substr(begin));
  return out;
}

// The last line of a worker's log that is not blank (its error, when it was refused).
std::string last_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!trim(line).empty()) last = trim(line);
  return last;
}

// The error a worker ended with: its last line that kbench wrote ("kbench: internal error:
// .../prepare.cpp:270: cudaStreamSynchronize(stream) failed: cudaErrorIllegalAddress (an illegal
// memory access was encountered)"), without the program's name; else, for a process that
// aborted while unwinding from the error (a destructor's CUDA call on the lost context), the
// exception std::terminate printed ("what(): ..."); empty when there is neither.
std::string worker_error(const fs::path& log) {
  std::ifstream in(log);
  std::string line, said, terminated;
  const std::string lead = "kbench: ", what = "what():";
  while (std::getline(in, line)) {
    if (line.rfind(lead, 0) == 0) said = trim(line.substr(lead.size()));
    else if (const auto at = line.find(what); at != std::string::npos) terminated = trim(line.substr(at + what.size()));
  }
  return printable(said.empty() ? terminated : said, 400);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

std::string how_it_ended(const ChildProcess& p) {
  if (p.end_signal() != 0) {
    const char* name = strsignal(p.end_signal());
    return "killed by signal " + std::to_string(p.end_signal()) + (name ? std::string(" (") + name + ")" : "");
  }
  return "exit status " + std::to_string(p.exit_code());
}

// The one result file a worker wrote under its --out (<out>/<experiment>/<name>.json).
std::vector<fs::path> results_under(const fs::path& out) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
  return files;
}

struct Running {
  WorkerReport report;
  std::unique_ptr<ChildProcess> process;
  fs::path out;
  fs::path steps;  // the attempt's steps file (harness/worker_steps.hpp)
  std::chrono::steady_clock::time_point began;
  bool ended = false;
  // The step deadline: the steps file's size when last seen to change, and when.
  std::uintmax_t steps_size = 0;
  std::chrono::steady_clock::time_point last_step_at;
  bool killed_at_deadline = false;
  int unexplained_deaths = 0;  // deaths whose last step named no variant
};

std::string worker_name(const WorkerJob& job) {
  return "worker " + shard_name(job.shard) + " (device " + std::to_string(job.device) + ")";
}

void start(Running& w, const WorkerCommand& command, const fs::path& dir) {
  ++w.report.attempts;
  const std::string base = "worker-" + std::to_string(w.report.job.shard.index) + "-attempt-" + std::to_string(w.report.attempts);
  w.out = dir / base;
  w.report.log = dir / (base + ".log");
  w.steps = dir / (base + ".steps");
  const fs::path exclude = dir / (base + ".exclude");
  fs::create_directories(w.out);
  std::vector<WorkerStep> faulted;
  for (const WorkerFault& f : w.report.faults) faulted.push_back(f.step);
  write_excluded(exclude, faulted);
  ProcessOptions options;
  options.env = {{"CUDA_VISIBLE_DEVICES", w.report.job.visible},
                 {kWorkerStepsVariable, w.steps.string()},
                 {kWorkerExcludeVariable, exclude.string()}};
  w.process = std::make_unique<ChildProcess>(command(w.report.job, w.out), options, w.report.log);
  w.began = std::chrono::steady_clock::now();
  w.steps_size = 0;
  w.last_step_at = w.began;
  w.killed_at_deadline = false;
  if (!w.process->started()) {
    w.ended = true;
    w.report.failure = "could not be started";
    spdlog::error("{} could not be started", worker_name(w.report.job));
    return;
  }
  spdlog::info("{}: started with CUDA_VISIBLE_DEVICES={} (attempt {}), log {}", worker_name(w.report.job),
               w.report.job.visible, w.report.attempts, w.report.log.string());
}

// Kills a worker that has reported no new step for the deadline: a kernel that never ends holds
// its process in a synchronisation that nothing else will end.
void watch_deadline(Running& w, double timeout_s) {
  const auto now = std::chrono::steady_clock::now();
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(w.steps, ec);
  if (!ec && size != w.steps_size) {
    w.steps_size = size;
    w.last_step_at = now;
    return;
  }
  if (w.killed_at_deadline || std::chrono::duration<double>(now - w.last_step_at).count() <= timeout_s) return;
  const auto step = last_step(w.steps);
  spdlog::error("{}: no new step for {} s (its last: {}{}); killed", worker_name(w.report.job), seconds_text(timeout_s),
                step ? step->phase : "none", step && step->names_variant() ? " " + step->variant + " on " + step->case_label : "");
  w.process->send_signal(SIGKILL);
  w.killed_at_deadline = true;
}

// A worker that died while its last step named a variant not faulted before: that variant's
// fault, and whether the worker starts again without it.
bool record_fault(Running& w, const std::string& death, double timeout_s) {
  const auto step = last_step(w.steps);
  if (!step || !step->names_variant()) return false;
  for (const WorkerFault& f : w.report.faults)
    if (f.step.case_label == step->case_label && f.step.variant == step->variant) return false;  // left out: not it
  WorkerFault fault{*step, "", w.report.attempts};
  if (w.killed_at_deadline) {
    fault.error = "ran past the " + seconds_text(timeout_s) + " s step deadline (--unit-timeout) in its " + step->phase +
                  " step; killed";
  } else {
    const std::string said = worker_error(w.report.log);
    fault.error = said.empty() ? death : said + " (" + death + ")";
  }
  w.report.faults.push_back(fault);
  w.report.deaths.push_back(death + " in the " + step->phase + " step of " + step->variant + " on " + step->case_label);
  spdlog::error("{}: {} on {} faulted in its {} step: {}", worker_name(w.report.job), step->variant, step->case_label,
                step->phase, fault.error);
  return true;
}

// A worker that just ended: done, refused, or dead (started again when it may be).
void finish(Running& w, const WorkerCommand& command, const fs::path& dir, bool interrupted, const WorkerLimits& limits) {
  ChildProcess& p = *w.process;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - w.began).count();
  const std::string name = worker_name(w.report.job);
  const int code = p.exit_code();
  const bool wrote_on_its_own = code == 0 || code == 1 || code == 128 + SIGINT || code == 128 + SIGTERM;
  std::string death;
  if (code == 2) {
    w.report.refused = true;
    w.report.failure = "refused its input: " + last_line(w.report.log);
    spdlog::error("{} {}", name, w.report.failure);
    w.ended = true;
    return;
  }
  if (wrote_on_its_own) {
    const auto files = results_under(w.out);
    if (files.size() == 1) {
      try {
        w.report.result = read_result(files.front());
        w.report.file = files.front();
        spdlog::info("{}: done in {:.1f} s ({} records)", name, seconds, w.report.result->records.size());
        w.ended = true;
        return;
      } catch (const UsageError& e) {
        death = how_it_ended(p) + " with an unreadable result (" + e.what() + ")";
      }
    } else {
      death = how_it_ended(p) + " with " + std::to_string(files.size()) + " result files written, not one";
    }
  } else {
    death = how_it_ended(p);
  }
  if (w.killed_at_deadline) death = "killed at the " + seconds_text(limits.step_timeout_s) + " s step deadline";
  if (!interrupted && record_fault(w, death, limits.step_timeout_s)) {
    const int faults = static_cast<int>(w.report.faults.size());
    if (faults <= limits.max_faults) {
      spdlog::warn("{}: its shard runs again in a fresh worker without the {} variant(s) that faulted", name, faults);
      start(w, command, dir);
      return;
    }
    w.report.failure = "faulted " + std::to_string(faults) + " times, more than the " + std::to_string(limits.max_faults) +
                       " a worker may";
    spdlog::error("{}: {}; log {}", name, w.report.failure, w.report.log.string());
    w.ended = true;
    return;
  }
  w.report.deaths.push_back(death);
  ++w.unexplained_deaths;
  const std::string tail = last_line(w.report.log);
  if (w.unexplained_deaths < 2 && !interrupted) {
    spdlog::warn("{} died after {:.1f} s: {}{}; its shard runs again in a fresh worker", name, seconds, death,
                 tail.empty() ? "" : " (its last line: " + tail + ")");
    start(w, command, dir);
    return;
  }
  w.report.failure = death + (w.unexplained_deaths > 1 ? ", on each of its " + std::to_string(w.unexplained_deaths) +
                                                           " attempts" + (w.report.faults.empty() ? "" : " that named no variant")
                                                     : "");
  spdlog::error("{} died: {}{}; log {}", name, w.report.failure, tail.empty() ? "" : " (its last line: " + tail + ")",
                w.report.log.string());
  w.ended = true;
}

}  // namespace

std::vector<int> parse_devices(const std::string& text) {
  std::vector<int> devices;
  for (const std::string& item : split(text, ',')) {
    const bool digits = !item.empty() && std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    const auto value = digits ? parse_whole(item, 0, 1023) : std::nullopt;
    if (!value) throw UsageError("--devices expects device indices 0 to 1023 separated by commas (0,1,3), got '" + text + "'");
    if (std::find(devices.begin(), devices.end(), *value) != devices.end())
      throw UsageError("--devices names device " + item + " twice: '" + text + "'");
    devices.push_back(static_cast<int>(*value));
  }
  return devices;
}

std::vector<std::string> worker_argv(const std::vector<std::string>& parent_argv, const std::string& program,
                                     const ShardSpec& shard, const fs::path& out) {
  // The parent's own options: the worker is one shard on one device, and runs no workers itself.
  static const std::vector<std::string> dropped = {"--devices", "--device", "--shard", "--out", "--unit-timeout"};
  static const std::vector<std::string> dropped_flags = {"--isolate"};
  std::vector<std::string> argv = {program};
  for (std::size_t i = 1; i < parent_argv.size(); ++i) {
    const std::string& a = parent_argv[i];
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (std::find(dropped_flags.begin(), dropped_flags.end(), name) != dropped_flags.end()) continue;
    if (std::find(dropped.begin(), dropped.end(), name) == dropped.end()) {
      argv.push_back(a);
      continue;
    }
    if (eq == std::string::npos) ++i;  // its value is the next word
  }
  for (const std::string& a : {std::string("--device"), std::string("0"), std::string("--shard"), shard_name(shard),
                               std::string("--out"), out.string()})
    argv.push_back(a);
  return argv;
}

std::string worker_visible_device(const char* parent_visible, int device) {
  if (parent_visible == nullptr) return std::to_string(device);
  std::vector<std::string> visible;
  for (const std::string& item : split(parent_visible, ','))
    if (!trim(item).empty()) visible.push_back(trim(item));
  if (device < 0 || static_cast<std::size_t>(device) >= visible.size())
    throw UsageError("--devices names device " + std::to_string(device) + ", but CUDA_VISIBLE_DEVICES='" +
                     parent_visible + "' shows " + std::to_string(visible.size()) + " device(s), numbered from 0");
  return visible[static_cast<std::size_t>(device)];
}

double parse_step_timeout(const std::string& text) {
  char* end = nullptr;
  const double s = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  const bool plain = !text.empty() && end == text.c_str() + text.size() &&
                     std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  if (!plain || !std::isfinite(s) || s <= 0 || s > 86400)
    throw UsageError("--unit-timeout expects seconds above 0 and at most 86400 (a day), as 300 or 2.5, got '" + text + "'");
  return s;
}

std::vector<WorkerReport> run_workers(const std::vector<WorkerJob>& jobs, const WorkerCommand& command, const fs::path& dir,
                                      const WorkerLimits& limits) {
  install_interrupt_handlers();
  std::vector<Running> workers(jobs.size());
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    workers[k].report.job = jobs[k];
    start(workers[k], command, dir);
  }
  bool passed_on = false;
  for (;;) {
    const int sig = interrupt_signal();
    if (sig != 0 && !passed_on) {
      spdlog::warn("{}: passed on to every worker still running; each stops at its next visit boundary and writes what "
                   "it measured", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      for (Running& w : workers)
        if (!w.ended) w.process->send_signal(sig);
      passed_on = true;
    }
    bool all = true;
    for (Running& w : workers) {
      if (w.ended) continue;
      if (w.process->finished()) {
        finish(w, command, dir, sig != 0, limits);  // after a signal, nothing starts again
      } else {
        watch_deadline(w, limits.step_timeout_s);
      }
      all = all && w.ended;
    }
    if (all) break;
    std::this_thread::sleep_for(kPollInterval);
  }
  std::vector<WorkerReport> reports;
  for (Running& w : workers) reports.push_back(std::move(w.report));
  return reports;
}

}  // namespace kbench
