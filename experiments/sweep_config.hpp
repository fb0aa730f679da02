// The sweep's inputs: which ops, dtypes, shapes and variants, in which cache modes and timers,
// how many visits and samples, from which seed. Read from a JSON config (configs/*.json, the
// format scripts/torch_baseline.py reads too) and narrowed or overridden by command-line flags.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/shape.hpp"
#include "harness/runner.hpp"
#include "harness/schedule.hpp"

namespace kbench {

struct CaseSpec {
  std::string op;
  std::vector<DType> dtypes;
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::string> variants;  // empty: every variant of the op
  std::map<std::string, double> params = {};  // the op's parameters (Op::params); others keep their default
};

// Visits and samples above this are a typo (1e12), not a run: at 100000 visits of a 1 us case
// the run would already take days once the flushes are counted.
inline constexpr int kMaxVisitsOrSamples = 100000;
// Seeds, on the command line as in configs: past 2^53 a JSON number is not held exactly by
// every reader (a result records its seed), and the schemas' bounds are compared as doubles.
inline constexpr std::int64_t kMaxSeed = (std::int64_t{1} << 53) - 1;

struct SweepSettings {
  std::string experiment = "sweep";
  std::string description;
  std::string config_path;  // as given, for the record
  std::vector<CaseSpec> cases;
  std::vector<std::string> caches{"cold"};
  std::vector<std::string> timers{"events"};
  int visits = 3;
  int samples = 3;
  std::uint64_t seed = 1;
  int device = 0;
  double clock_floor = kDefaultClockFloor;  // harness/runner.hpp Measurement::clock_floor
  // Add copy at 2^28 float32 elements when the config has no copy case, and the same-traffic
  // stream of each memory-bound case (its op's mix at its bytes): the rooflines.
  bool roofline = true;
  StoppingRule until = {};  // harness/schedule.hpp; target 0: fixed visits x samples
  // The --plugin libraries loaded into the registry, as their meta.plugins block
  // (src/plugin/plugin_loader.hpp); empty when none.
  nlohmann::json plugins = nlohmann::json::array();
};

// A config file's JSON (UsageError, one line, when it is unreadable or not JSON), for its
// reader to check against its schema (configs/schema/): every experiment's config goes
// through it (sweep, grid).
nlohmann::json read_config_json(const std::filesystem::path& file);

// j[key] as cache modes or timers, after the schema has checked it: one name ("cold", "both")
// or a list of them; `fallback` when absent. UsageError when a mode comes twice through
// "both" or "all" (["cold", "both"] would time cold twice), which the schema cannot see.
std::vector<std::string> config_modes(const nlohmann::json& j, const char* key, const std::string& where,
                                      std::vector<std::string> fallback,
                                      std::vector<std::string> (*parse)(const std::string&));

// A whole JSON number in [lo, hi], for the experiment blocks of results that no schema covers
// (experiments/grid_analysis.cpp): 2.7 or 1e12 are errors, not 2 or an overflow.
std::int64_t whole_number(const nlohmann::json& v, const std::string& what, std::int64_t lo, std::int64_t hi);
// j[key] as such a number, or `fallback` when absent.
std::int64_t whole_field(const nlohmann::json& j, const char* key, const std::string& where, std::int64_t fallback,
                         std::int64_t lo, std::int64_t hi);

// Throws UsageError with one line naming the problem (unreadable file, bad JSON, bad field).
SweepSettings load_sweep_config(const std::filesystem::path& file);

// The same from a config's text; `name` is what errors and the record call it.
SweepSettings parse_sweep_config(const std::string& text, const std::string& name);

// "cold" | "warm" | "both" -> list; timers: "events" | "graph" | "cupti" | "both" (events and
// graph, as before the third timer) | "all".
std::vector<std::string> parse_cache_modes(const std::string& text);
std::vector<std::string> parse_timers(const std::string& text);

}  // namespace kbench
