// kbench probe: GPU clock behaviour after idle pauses (experiments/probe.hpp), written to
// <out>/probe/.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <limits>
#include <memory>

#include "cli/commands.hpp"
#include "cli/whole_number.hpp"
#include "core/errors.hpp"
#include "experiments/probe.hpp"
#include "experiments/sweep_config.hpp"
#include "report/probe_report.hpp"

namespace kbench {

namespace {

// --pauses as text, split here: CLI11 reads `--pauses ""` into a list of doubles as no value at
// all (the default pauses would run in place of the empty list asked for), and its delimiter
// drops empty items (`1,,2` read as 1,2).
std::vector<std::string> split_commas(const std::vector<std::string>& texts) {
  std::vector<std::string> items;
  for (const auto& text : texts) {
    std::size_t start = 0;
    for (std::size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
      items.push_back(text.substr(start, comma - start));
    items.push_back(text.substr(start));
  }
  return items;
}

std::vector<double> parse_pauses(const std::vector<std::string>& texts) {
  std::vector<double> out;
  for (const auto& t : split_commas(texts)) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != t.size()) throw UsageError("--pauses expects seconds (e.g. 0,1,5), got '" + t + "'");
    out.push_back(v);
  }
  return out;
}

}  // namespace

void add_probe_command(CLI::App& app) {
  struct Options {
    ProbeSettings settings;
    std::vector<std::string> pauses;
    long long seed = -1;
    std::string out = "results";
  };
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "probe", "GPU clock behaviour after idle: a fixed kernel timed again and again after pauses, with the SM "
               "clock of every sample; states the warm-up a run needs");
  sub->add_option("--pauses", o->pauses, "Idle pauses in seconds, increasing (default 0 0.1 0.5 1 2 5 10 20)");
  sub->add_option("--repeats", o->settings.repeats, "Series per pause, in shuffled order (default 3)")
      ->check(whole_in(1, kMaxVisitsOrSamples));
  sub->add_option("--window-ms", o->settings.window_ms, "How long each series samples after its pause (default 1000)");
  sub->add_option("--load-ms", o->settings.load_ms, "Busy load between samples, ms; 0: back to back (default 10)");
  sub->add_option("--iterations", o->settings.iterations, "FMA rounds of the fixed kernel (default 2500)")
      ->check(whole_in(1, std::numeric_limits<int>::max()));
  sub->add_option("--tolerance", o->settings.tolerance, "Settled: within this share of steady (default 0.02)");
  sub->add_option("--seed", o->seed, "Seed for the order of the series (recorded)")
      ->check(whole_in(0, kMaxSeed));
  sub->add_option("--device", o->settings.device, "CUDA device index")->check(whole_in(0, 1023));
  sub->add_option("--out", o->out, "Results root; the file goes to <out>/probe/");
  sub->callback([o] {
    ProbeSettings s = o->settings;
    if (!o->pauses.empty()) s.pauses_s = parse_pauses(o->pauses);
    if (o->seed >= 0) s.seed = static_cast<std::uint64_t>(o->seed);
    const Experiment e = probe_experiment(s);  // validates first: bad input writes nothing
    const Result r = run_experiment(e, process_argv());
    const auto path = write_result(r, std::filesystem::path(o->out) / e.name);
    std::printf("%s", probe_markdown(r.extra.at("probe").at("analysis")).c_str());
    spdlog::info("wrote {}", path.string());
    end_if_incomplete(r, path);
  });
}

}  // namespace kbench
