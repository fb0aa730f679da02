// kbench spec: softmax and rmsnorm built three ways, checked, timed and set beside their
// kernels' attributes (experiments/spec.hpp), written to <out>/spec/.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "cli/whole_number.hpp"
#include "core/errors.hpp"
#include "experiments/spec.hpp"
#include "experiments/sweep_config.hpp"
#include "report/spec_report.hpp"

namespace kbench {

void add_spec_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> ops, dtypes, shapes;
    std::string cache, timer;
    SpecSettings settings;
    long long seed = -1;
    std::string out = "results";
  };
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "spec", "Compile-time specialisation: softmax and rmsnorm built with runtime sizes, a fixed vector count "
              "and a fixed width, timed side by side with their registers, spills and occupancy");
  sub->add_option("--op", o->ops, "softmax and/or rmsnorm (repeatable; default both)");
  sub->add_option("--dtype", o->dtypes, "float32, float16, bfloat16 (repeatable; default all three)");
  sub->add_option("--shape", o->shapes,
                  "RxC (repeatable; default 4096x{4096,4097,4104,8192,8200} and 512x4104; the width build exists "
                  "for those widths only)");
  sub->add_option("--cache", o->cache, "cold | warm | both (default cold)");
  sub->add_option("--timer", o->timer, "events | graph | both (default graph)");
  sub->add_option("--visits", o->settings.visits, "Visits per case (randomized order; default 9)")
      ->check(whole_in(1, kMaxVisitsOrSamples));
  sub->add_option("--samples", o->settings.samples, "Samples per build per visit (default 3)")
      ->check(whole_in(1, kMaxVisitsOrSamples));
  sub->add_option("--threshold", o->settings.threshold, "A build pays when this much faster (default 0.03)");
  sub->add_option("--seed", o->seed, "Seed for inputs and visit order (recorded)")
      ->check(whole_in(0, kMaxSeed));
  sub->add_option("--device", o->settings.device, "CUDA device index")->check(whole_in(0, 1023));
  sub->add_option("--out", o->out, "Results root; the file goes to <out>/spec/");
  sub->callback([o] {
    SpecSettings s = o->settings;
    if (!o->ops.empty()) s.ops = o->ops;
    if (!o->dtypes.empty()) {
      s.dtypes.clear();
      for (const auto& d : o->dtypes) s.dtypes.push_back(parse_dtype(d));
    }
    if (!o->shapes.empty()) {
      s.shapes.clear();
      for (const auto& sh : o->shapes) s.shapes.push_back(parse_shape(sh));
    }
    if (!o->cache.empty()) s.caches = parse_cache_modes(o->cache);
    if (!o->timer.empty()) s.timers = parse_timers(o->timer);
    if (o->seed >= 0) s.seed = static_cast<std::uint64_t>(o->seed);
    const Experiment e = spec_experiment(s);  // validates first: bad input writes nothing
    const Result r = run_experiment(e, process_argv());
    const auto path = write_result(r, std::filesystem::path(o->out) / e.name);
    std::printf("%s", spec_markdown(r.extra.at("spec").at("analysis")).c_str());
    spdlog::info("wrote {}", path.string());
    end_if_incomplete(r, path);
    if (!r.extra.at("check_failures").empty())
      throw Failure(std::to_string(r.extra.at("check_failures").size()) +
                    " build(s) failed their check and were not timed (see the log)");
  });
}

}  // namespace kbench
