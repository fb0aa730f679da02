// kbench run: the operator sweep (experiments/sweep.cpp), written to <out>/<experiment>/.
// --dry-run prints the plan instead (harness/dry_run.hpp): after the same validation, with no
// GPU needed and nothing written.
#include <spdlog/spdlog.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/sweep_options.hpp"
#include "core/errors.hpp"
#include "device/device_info.hpp"
#include "experiments/sweep.hpp"
#include "core/shape.hpp"
#include "harness/dry_run.hpp"
#include "record/manifest.hpp"

namespace kbench {

namespace {

void warn_if_tree_differs() {
  try {
    const auto diff = tree_differences(source_root());
    if (!diff.empty())
      spdlog::warn("the source tree differs from this binary's manifest in {} file(s) (first: {}); "
                   "rebuild before measuring",
                   diff.size(), diff.front());
  } catch (const UsageError& e) {
    spdlog::warn("cannot compare the source tree with the binary's manifest: {}", e.what());
  }
}

void print_table(const Result& r) {
  std::printf("%-9s %-10s %-9s %-14s %-5s %-6s %11s %9s %6s %6s\n", "op", "variant", "dtype", "shape",
              "cache", "timer", "median_us", "GB/s", "copy%", "roof%");
  for (const auto& rec : r.records) {
    // roof%: of the same-traffic stream (Record::roofline), where the record has one.
    const double roof = rec.roofline.is_object() ? 100.0 * rec.roofline.value("fraction", 0.0) : 0.0;
    std::printf("%-9s %-10s %-9s %-14s %-5s %-6s %11.3f %9.1f %6.1f %6.1f\n", rec.op.c_str(),
                rec.variant.c_str(), rec.dtype.c_str(), shape_string(rec.shape).c_str(),
                rec.cache.c_str(), rec.timer.c_str(), rec.median_us, rec.gbps,
                100.0 * rec.copy_fraction, roof);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Operator sweep: check every variant, then time it in randomized visits");
  auto opts = add_sweep_options(sub, /*timing=*/true);
  auto dry_run = std::make_shared<bool>(false);
  sub->add_flag("--dry-run", *dry_run,
                "Print the plan (cases, variants and skips, samples, an estimate of the time) and exit; "
                "needs no GPU, writes nothing");
  sub->callback([opts, dry_run] {
    const SweepSettings s = resolve_sweep_settings(*opts);
    if (*dry_run) {
      // sweep_experiment validates ops, variants and shapes before any device is looked at.
      const Experiment e = sweep_experiment(s);
      const PlanDevice dev = plan_device(s.device);
      std::fputs(describe_plan(e, dev.limits, dev.source).c_str(), stdout);
      return;
    }
    warn_if_tree_differs();
    const Result r = run_experiment(sweep_experiment(s), process_argv());
    const auto path = write_result(r, std::filesystem::path(opts->out) / s.experiment);
    print_table(r);
    spdlog::info("wrote {}", path.string());
    end_if_incomplete(r, path);
    if (!r.extra.at("check_failures").empty())
      throw Failure(std::to_string(r.extra.at("check_failures").size()) +
                               " variant(s) failed their check and were not timed (see the log)");
  });
}

}  // namespace kbench
