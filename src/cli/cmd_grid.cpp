// kbench grid: every row plan of one row op over a grid of row counts x widths
// (experiments/grid.hpp), written to <out>/grid/; the summary of its analysis is printed.
// --shard i/n runs one shard of the cells, --devices one worker per GPU (cli/shard_options.hpp).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "cli/devices_run.hpp"
#include "cli/shard_options.hpp"
#include "cli/whole_number.hpp"
#include "core/errors.hpp"
#include "device/device_info.hpp"
#include "device/device_limits.hpp"
#include "experiments/grid.hpp"
#include "experiments/sweep_config.hpp"
#include "report/grid_report.hpp"

namespace kbench {

namespace {

// A shard's analysis may be missing (a shard without a timed cell): merge makes the whole one.
void print_analysis(const Result& r) {
  const auto grid = r.extra.find("grid");
  if (grid != r.extra.end() && grid->contains("analysis")) std::printf("%s", grid_markdown(grid->at("analysis")).c_str());
  else spdlog::info("no analysis in this result (a shard without a timed cell; kbench merge analyses the joined shards)");
}

}  // namespace

void add_grid_command(CLI::App& app) {
  struct Options {
    std::string config = "configs/grid.json";
    std::string op, dtype, cache, timer;
    int visits = 0, samples = 0, device = 0;
    long long seed = -1;
    std::string out = "results";
    bool list = false;
  };
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "grid", "Row-plan grids: check and time every row plan of one row op over a grid of row counts x widths, "
              "with the current rule's choice and regret per cell");
  sub->add_option("--config", o->config, "Grid config (default configs/grid.json)");
  sub->add_option("--op", o->op, "The row op: row_sum, softmax, softmax_backward, rmsnorm, rmsnorm_backward");
  sub->add_option("--dtype", o->dtype, "Only this dtype (default: the config's)");
  sub->add_option("--cache", o->cache, "warm (default) | cold (with --timer events or cupti only)");
  sub->add_option("--timer", o->timer, "graph (default) | events | cupti");
  sub->add_option("--visits", o->visits, "Visits per cell (default: the config's)")
      ->check(whole_in(1, kMaxVisitsOrSamples));
  sub->add_option("--samples", o->samples, "Samples per plan per visit (default: the config's)")
      ->check(whole_in(1, kMaxVisitsOrSamples));
  sub->add_option("--seed", o->seed, "Seed for inputs, visit order and checked rows (recorded)")
      ->check(whole_in(0, kMaxSeed));
  sub->add_option("--device", o->device, "CUDA device index")->check(whole_in(0, 1023));
  sub->add_option("--out", o->out, "Results root; the file goes to <out>/grid/");
  sub->add_flag("--list", o->list,
                "List the cells and their plan counts on this device (with --shard, the shard's), run nothing");
  auto shards = add_shard_options(sub);
  sub->callback([o, shards, sub] {
    GridSettings s = load_grid_config(o->config);
    if (!o->op.empty()) s.op = o->op;
    if (!o->dtype.empty()) s.dtypes = {parse_dtype(o->dtype)};
    if (!o->cache.empty()) s.caches = parse_cache_modes(o->cache);
    if (!o->timer.empty()) s.timers = parse_timers(o->timer);
    if (o->visits > 0) s.visits = o->visits;
    if (o->samples > 0) s.samples = o->samples;
    if (o->seed >= 0) s.seed = static_cast<std::uint64_t>(o->seed);
    s.device = o->device;
    validate_grid_settings(s);  // bad input writes nothing and touches no GPU
    const ShardRequest req = resolve_shard_options(*shards, *sub, s.device);
    const std::filesystem::path results_dir = std::filesystem::path(o->out) / "grid";
    if (!req.devices.empty() && !o->list) {
      // The cells depend on the GPU's SM count: the workers make the plan, the parent opens no
      // CUDA context (it would sit on the first worker's GPU), and merge checks they agree.
      require_result_dir(results_dir);
      const DevicesOutcome d = run_on_devices({req.devices, "grid", results_dir, 0, "", "", process_argv(), req.step_timeout_s});
      print_analysis(d.merged);
      spdlog::info("wrote {}", d.written.string());
      end_if_incomplete(d.merged, d.written);
      if (!d.lost.empty()) throw Failure(d.lost);
      if (!d.faulted.empty()) throw Failure(d.faulted);
      return;
    }
    select_device(s.device);
    const DeviceLimits& dev = current_device_limits();
    if (o->list) {
      std::vector<std::string> left_out;
      std::size_t plans = 0;
      auto cells = grid_cells(s, dev, &left_out);
      if (req.shard) {  // a cell is a case of the plan, in order (grid_experiment)
        std::vector<GridCell> mine;
        for (const std::size_t i : shard_case_indices(cells.size(), *req.shard, s.seed)) mine.push_back(cells[i]);
        std::printf("shard %s: %zu of %zu cells\n", shard_name(*req.shard).c_str(), mine.size(), cells.size());
        cells = std::move(mine);
      }
      for (const auto& c : cells) {
        std::printf("%s %lldx%lld: %zu plans, rule %s\n", std::string(dtype_name(c.dtype)).c_str(), static_cast<long long>(c.rows),
                    static_cast<long long>(c.width), c.plans.size(), c.rule.c_str());
        plans += c.plans.size();
      }
      std::printf("%zu cells, %zu plans; %zu left out above %lld elements\n", cells.size(), plans, left_out.size(),
                  static_cast<long long>(s.max_elements));
      return;
    }
    Experiment e = grid_experiment(s, dev);
    if (req.shard) {
      e = shard_experiment(e, *req.shard, "grid");
      spdlog::info("{}", shard_summary(e));
    }
    const Result r = run_experiment(e, process_argv());
    const auto path = write_result(r, results_dir);
    print_analysis(r);
    spdlog::info("wrote {}", path.string());
    end_if_incomplete(r, path);
  });
}

}  // namespace kbench
