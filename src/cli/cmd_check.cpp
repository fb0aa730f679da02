// kbench check: every selected variant against the FP64 oracle, no timing; with
// --tolerance-probe N, the worst error of each op, dtype and variant over N seeds of every
// input kind, as a share of its tolerance (experiments/tolerance_probe.hpp), and with --out
// the probe's result file under <out>/tolerance/.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/sweep_options.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "experiments/sweep.hpp"
#include "experiments/tolerance_probe.hpp"
#include "plugin/plugin_loader.hpp"

namespace kbench {

namespace {

// The probe's seed count: a whole number from 1 to a million (UsageError otherwise).
int parse_probe_seeds(const std::string& text) {
  const auto n = parse_whole(text, 1, 1000000);
  if (!n) throw UsageError("--tolerance-probe expects a whole number of seeds from 1 to 1000000, got '" + text + "'");
  return static_cast<int>(*n);
}

// `out`: the results root, or empty for no file.
void run_probe(const SweepOptions& o, const std::string& seeds, const std::string& out) {
  if (!o.config.empty() || !o.shapes.empty() || !o.params.empty())
    throw UsageError("--tolerance-probe draws its own shapes and inputs: --config, --shape and --param do not apply");
  ToleranceSettings s;
  s.seeds = parse_probe_seeds(seeds);
  s.ops = o.ops;
  s.variants = o.variants;
  for (const auto& d : o.dtypes) s.dtypes.push_back(parse_dtype(d));
  if (o.seed >= 0) s.seed = static_cast<std::uint64_t>(o.seed);
  s.device = o.device;
  const nlohmann::json plugins = load_plugin_options(o);
  const std::vector<ProbeCase> cases = plan_tolerance_probe(s);  // bad input fails here, before the GPU
  if (out.empty()) {
    const ShareTable table = run_tolerance_probe(s, cases);
    for (const auto& l : share_report(table)) std::printf("%s\n", l.c_str());
    if (!table.all_within()) throw Failure("some errors exceed their tolerance");
    end_with_plugin_refusals(plugins);
    return;
  }
  Experiment e = tolerance_experiment(s, cases);
  if (!plugins.empty()) e.meta["plugins"] = plugins;
  const std::filesystem::path dir = std::filesystem::path(out) / e.name;
  require_result_dir(dir);
  const Result r = run_experiment(e, process_argv());
  const auto path = write_result(r, dir);
  // Printed from the records, as kbench report prints the file: the same lines either way.
  for (const auto& l : share_lines(share_rows_from_records(r.records))) std::printf("%s\n", l.c_str());
  spdlog::info("wrote {}", path.string());
  for (const Record& rec : r.records)
    if (!rec.check.passed) throw Failure("some errors exceed their tolerance");
  end_with_plugin_refusals(plugins);
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto* sub = app.add_subcommand("check", "Check every selected variant against the FP64 oracle (no timing)");
  auto opts = add_sweep_options(sub, /*timing=*/false);
  auto probe_seeds = std::make_shared<std::string>();
  auto* probe = sub->add_option("--tolerance-probe", *probe_seeds,
                  "N seeds of every input kind (random and adversarial) per op and dtype: report each "
                  "variant's worst error as a share of its tolerance");
  auto out = std::make_shared<std::string>();
  auto* out_option = sub->add_option("--out", *out,
                                     "With --tolerance-probe: results root; the probe's file goes to <out>/tolerance/ "
                                     "(default: none)");
  sub->callback([opts, probe_seeds, probe, out, out_option] {
    if (out_option->count() > 0 && out->empty()) throw UsageError("--out needs a folder");
    if (probe->count() > 0) return run_probe(*opts, *probe_seeds, *out);
    if (out_option->count() > 0) throw UsageError("--out applies to --tolerance-probe only: kbench check writes no file");
    const SweepSettings s = resolve_sweep_settings(*opts);
    const bool ok = check_experiment(sweep_experiment(s), [](const std::string& l) {
      std::printf("%s\n", l.c_str());
      std::fflush(stdout);  // each verdict as it comes, also into a pipe or a file
    });
    if (!ok) throw Failure("some variants failed their check");
    end_with_plugin_refusals(s.plugins);
  });
}

}  // namespace kbench
