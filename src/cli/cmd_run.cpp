// kbench run: the operator sweep (experiments/sweep.cpp), written to <out>/<experiment>/.
// --dry-run prints the plan instead (harness/dry_run.hpp): after the same validation, with no
// GPU needed and nothing written (with --format json, as data: the whole plan, shards aside, each
// case with the bytes and flops its records count). --shard i/n runs one shard of the plan (harness/shard.hpp);
// --devices runs every shard, one worker process per GPU, and merges them (cli/devices_run.hpp).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/devices_run.hpp"
#include "cli/shard_options.hpp"
#include "cli/sweep_options.hpp"
#include "core/errors.hpp"
#include "device/device_info.hpp"
#include "experiments/sweep.hpp"
#include "core/shape.hpp"
#include "harness/dry_run.hpp"
#include "plugin/plugin_loader.hpp"
#include "record/manifest.hpp"
#include "report/run_table.hpp"

namespace kbench {

namespace {

void end_with_checks(const Result& r) {
  if (!r.extra.at("check_failures").empty())
    throw Failure(std::to_string(r.extra.at("check_failures").size()) +
                  " variant(s) failed their check and were not timed (see the log)");
  end_with_plugin_refusals(r.meta.value("plugins", nlohmann::json::array()));
}

// --dry-run: the plan, or the shard's part of it, or each worker's part.
void print_dry_run(const Experiment& whole, const ShardRequest& req, int device) {
  const PlanDevice dev = plan_device(req.devices.empty() ? device : req.devices.front());
  if (req.shard) {
    const Experiment part = shard_experiment(whole, *req.shard, "run");
    std::printf("%s\n", shard_summary(part).c_str());
    std::fputs(describe_plan(part, dev.limits, dev.source).c_str(), stdout);
    return;
  }
  if (req.devices.empty()) {
    std::fputs(describe_plan(whole, dev.limits, dev.source).c_str(), stdout);
    return;
  }
  const int n = static_cast<int>(std::min(req.devices.size(), whole.cases.size()));
  for (int k = 0; k < n; ++k) {
    const Experiment part = shard_experiment(whole, {k, n}, "run");
    std::printf("%sworker on device %d: %s\n", k ? "\n" : "", req.devices[static_cast<std::size_t>(k)],
                shard_summary(part).c_str());
    std::fputs(describe_plan(part, dev.limits, dev.source).c_str(), stdout);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Operator sweep: check every variant, then time it in randomized visits");
  auto opts = add_sweep_options(sub, /*timing=*/true);
  auto shards = add_shard_options(sub);
  auto dry_run = std::make_shared<bool>(false);
  auto format = std::make_shared<std::string>("md");
  sub->add_option("--format", *format,
                  "The table printed at the end: md (a table per op, default), csv or json (every record, "
                  "as `kbench report --format csv|json` gives them)")
      ->check(CLI::IsMember({"md", "csv", "json"}));
  sub->add_flag("--dry-run", *dry_run,
                "Print the plan (cases, variants and skips, samples, an estimate of the time) and exit; "
                "needs no GPU, writes nothing. With --format json: the whole plan as data, each case with "
                "its parameters, bytes and flops (kbench/plan/v1)");
  sub->callback([opts, shards, dry_run, format, sub] {
    const SweepSettings s = resolve_sweep_settings(*opts);
    const ShardRequest req = resolve_shard_options(*shards, *sub, s.device);
    // sweep_experiment validates ops, variants and shapes before any device is looked at.
    const Experiment whole = sweep_experiment(s);
    if (*dry_run && *format == "json") {  // the whole plan as data, for programs (harness/dry_run.hpp)
      std::fputs((plan_json(whole).dump(2) + "\n").c_str(), stdout);
      end_with_plugin_refusals(s.plugins);
      return;
    }
    if (*dry_run) {
      print_dry_run(whole, req, s.device);
      end_with_plugin_refusals(s.plugins);
      return;
    }
    const std::filesystem::path results_dir = std::filesystem::path(opts->out) / s.experiment;
    require_tree_matches_binary(source_root());  // as each worker's runner does, before any starts
    if (!req.devices.empty()) {
      require_result_dir(results_dir);
      const DevicesOutcome o = run_on_devices({req.devices, "run", results_dir, whole.cases.size(), plan_sha256(whole), "",
                                               process_argv(), req.step_timeout_s});
      std::fputs(run_table(o.merged, *format, o.written.string()).c_str(), stdout);
      spdlog::info("wrote {}", o.written.string());
      end_if_incomplete(o.merged, o.written);
      if (!o.lost.empty()) throw Failure(o.lost);
      if (!o.faulted.empty()) throw Failure(o.faulted);
      end_with_checks(o.merged);
      return;
    }
    Experiment e = whole;
    if (req.shard) {
      e = shard_experiment(whole, *req.shard, "run");
      spdlog::info("{}", shard_summary(e));
    }
    const Result r = run_experiment(e, process_argv());
    const auto path = write_result(r, results_dir);
    std::fputs(run_table(r, *format, path.string()).c_str(), stdout);
    spdlog::info("wrote {}", path.string());
    end_if_incomplete(r, path);
    end_with_checks(r);
  });
}

}  // namespace kbench
