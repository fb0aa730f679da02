// The case-selection options shared by `run` and `check`, and how they combine with a config:
// --config gives the base (default: configs/quick.json, unless --op is given); --op, --variant
// and --dtype narrow it; --shape replaces its shapes; the remaining flags override settings.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "experiments/sweep_config.hpp"

namespace kbench {

struct SweepOptions {
  std::string config;
  std::vector<std::string> ops, variants, dtypes, shapes, params;
  std::vector<std::string> plugins;  // --plugin: shared libraries of variants (src/plugin/)
  std::string cache, timer;
  int visits = 0, samples = 0, device = 0;
  long long seed = -1;
  double clock_floor = -1;  // < 0: the default
  double until_noise_pct = 0;  // the stopping rule (harness/schedule.hpp): 0 off
  int max_visits = 0;          // 0: ten times the visits
  double min_seconds = 0;
  bool no_roofline = false;
  std::string out = "results";
};

// Adds the options to `sub`; timing=false leaves out the ones `check` has no use for.
std::shared_ptr<SweepOptions> add_sweep_options(CLI::App* sub, bool timing);

// Resolves options into settings (UsageError on bad input), the --plugin libraries loaded into
// the registry last (load_plugin_options).
SweepSettings resolve_sweep_settings(const SweepOptions& o);

// Loads the --plugin libraries (src/plugin/plugin_loader.hpp) and returns their meta.plugins
// block; an empty array when none is given.
nlohmann::json load_plugin_options(const SweepOptions& o);

}  // namespace kbench
