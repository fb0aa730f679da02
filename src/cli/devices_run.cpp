#include "cli/devices_run.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>

#include "cli/workers.hpp"
#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "core/scratch_dir.hpp"
#include "experiments/shard_merge.hpp"

namespace kbench {

namespace fs = std::filesystem;

namespace {

std::string this_program() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw UsageError("cannot find this program's path to start workers (/proc/self/exe: " + ec.message() + ")");
  return self.string();
}

std::string worker_label(const WorkerJob& job) {
  return "worker " + shard_name(job.shard) + " (device " + std::to_string(job.device) + ")";
}

}  // namespace

nlohmann::json faults_json(const std::vector<WorkerReport>& reports) {
  nlohmann::json out = nlohmann::json::array();
  for (const WorkerReport& r : reports)
    for (const WorkerFault& f : r.faults)
      out.push_back({{"op", f.step.op}, {"variant", f.step.variant}, {"dtype", f.step.dtype}, {"shape", f.step.shape},
                     {"case", f.step.case_label}, {"phase", f.step.phase}, {"error", f.error},
                     {"shard", r.job.shard.index}});
  return out;
}

DevicesOutcome run_on_devices(const DevicesRequest& request) {
  std::size_t n = request.devices.size();
  if (request.plan_cases > 0 && request.plan_cases < n) {
    spdlog::warn("--devices: {} devices for {} case(s); {} device(s) left idle", n, request.plan_cases,
                 n - request.plan_cases);
    n = request.plan_cases;
  }
  std::vector<WorkerJob> jobs;
  for (std::size_t k = 0; k < n; ++k) {
    const int d = request.devices[k];
    jobs.push_back({d, worker_visible_device(std::getenv("CUDA_VISIBLE_DEVICES"), d), {static_cast<int>(k), static_cast<int>(n)}});
  }
  const std::string program = request.program.empty() ? this_program() : request.program;
  ScratchDir dir("workers");
  const WorkerCommand command = [&](const WorkerJob& job, const fs::path& out) {
    return worker_argv(request.parent_argv, program, job.shard, out);
  };
  WorkerLimits limits;
  if (request.step_timeout_s > 0) limits.step_timeout_s = request.step_timeout_s;
  const std::vector<WorkerReport> reports = run_workers(jobs, command, dir.path(), limits);

  std::vector<ShardInput> shards;
  std::vector<std::string> lost;
  for (const WorkerReport& r : reports) {
    if (r.result) shards.push_back({"", *r.result});
    else lost.push_back(worker_label(r.job) + " " + r.failure);
  }
  if (std::all_of(reports.begin(), reports.end(), [](const WorkerReport& r) { return r.refused; }))
    throw UsageError(worker_label(reports.front().job) + " " + reports.front().failure);
  if (shards.empty() && interrupt_signal() != 0) {  // stopped in preparation: nothing measured, nothing kept
    const int sig = interrupt_signal();
    throw Interrupted(std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") +
                          " before any worker had measured: nothing was timed, nothing written",
                      sig);
  }
  if (shards.empty()) {
    dir.keep();
    throw Failure("no worker wrote a result (" + lost.front() + "); their logs are in " + dir.path().string());
  }
  MergeOptions options;
  options.allow_missing = !lost.empty();
  DevicesOutcome outcome;
  outcome.merged = merge_and_analyse(shards, options);
  Result& merged = outcome.merged;
  const std::string plan = merged.meta["merge"].value("plan_sha256", "");
  if (!request.plan_sha256.empty() && plan != request.plan_sha256) {
    dir.keep();
    throw Failure("the workers ran another plan (" + plan.substr(0, 12) + ") than this process made (" +
                  request.plan_sha256.substr(0, 12) + ": did the config change?); their results are in " +
                  dir.path().string());
  }
  merged.meta["argv"] = request.parent_argv;
  nlohmann::json workers = nlohmann::json::array();
  for (const WorkerReport& r : reports) {
    nlohmann::json w = {{"shard", r.job.shard.index}, {"device", r.job.device}, {"cuda_visible_devices", r.job.visible},
                        {"attempts", r.attempts}, {"deaths", r.deaths}, {"faults", r.faults.size()}};
    if (!r.result) w["failure"] = r.failure;
    workers.push_back(w);
  }
  merged.meta["merge"]["workers"] = workers;
  merged.meta["merge"]["step_timeout_s"] = limits.step_timeout_s;
  const nlohmann::json faults = faults_json(reports);
  if (!faults.empty()) {
    merged.extra["faults"] = faults;
    const nlohmann::json& first = faults.front();
    outcome.faulted = std::to_string(faults.size()) + " variant(s) faulted and were not timed (extra.faults), first " +
                      first.at("variant").get<std::string>() + " on " + first.at("case").get<std::string>() + ": " +
                      first.at("error").get<std::string>();
  }
  outcome.written = write_result(merged, request.results_dir);
  if (!lost.empty()) {
    dir.keep();
    outcome.lost = std::to_string(lost.size()) + " of " + std::to_string(n) + " shard(s) missing from " +
                   outcome.written.string() + ": " + lost.front() + "; logs in " + dir.path().string();
  }
  return outcome;
}

}  // namespace kbench
