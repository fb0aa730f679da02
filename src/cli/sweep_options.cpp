#include "cli/sweep_options.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "cli/whole_number.hpp"
#include "core/errors.hpp"
#include "kernels/all_ops.hpp"
#include "plugin/plugin_loader.hpp"
#include "record/manifest.hpp"

namespace kbench {

std::shared_ptr<SweepOptions> add_sweep_options(CLI::App* sub, bool timing) {
  auto o = std::make_shared<SweepOptions>();
  sub->add_option("--config", o->config, "Sweep config (JSON); default configs/quick.json");
  sub->add_option("--op", o->ops, "Only these ops (repeatable)");
  sub->add_option("--variant", o->variants, "Only these variants (repeatable; with --config, of its cases' own)");
  sub->add_option("--dtype", o->dtypes, "float32, float16, bfloat16 (repeatable; with --config, only those of its cases)");
  sub->add_option("--shape", o->shapes, "N, RxC or MxNxK; 2^k allowed (repeatable; with --config, only those of its cases)");
  sub->add_option("--param", o->params, "An op parameter NAME=VALUE, e.g. eps=1e-6 (repeatable; see kbench list)");
  sub->add_option("--seed", o->seed, "Seed for inputs and visit order (recorded)")->check(whole_in(0, kMaxSeed));
  sub->add_option("--device", o->device, "CUDA device index")->check(whole_in(0, 1023));
  sub->add_option("--plugin", o->plugins,
                  "A shared library of variants (docs/plugins.md), checked and timed beside kbench's own (repeatable)");
  if (!timing) return o;
  sub->add_option("--cache", o->cache, "cold | warm | both");
  sub->add_option("--timer", o->timer, "events | graph | cupti | both (events, graph) | all");
  sub->add_option("--visits", o->visits, "Visits per case (randomized order)")->check(whole_in(1, kMaxVisitsOrSamples));
  sub->add_option("--samples", o->samples, "Samples per variant per visit")->check(whole_in(1, kMaxVisitsOrSamples));
  sub->add_option("--out", o->out, "Results root; the file goes to <out>/<experiment>/");
  sub->add_option("--clock-floor", o->clock_floor,
                  "Discard (and retake) a visit that begins with the SM clock below this share of the warm clock; "
                  "0 turns the check off (default 0.9)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--until-noise", o->until_noise_pct,
                  "After the planned visits, visit again each case whose variants' per-visit medians are not yet "
                  "known to within PCT percent (the order-statistic interval's half-width), up to --max-visits")
      ->check(CLI::Range(0.01, 100.0));
  sub->add_option("--max-visits", o->max_visits, "With --until-noise: the most visits a case gets (default 10x --visits)")
      ->check(whole_in(1, kMaxVisitsOrSamples));
  sub->add_option("--min-seconds", o->min_seconds, "With --until-noise: visit every case for at least this long")
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_flag("--no-roofline", o->no_roofline, "Do not add the roofline cases (the 2^28 copy, and each memory-bound case's same-traffic stream)");
  return o;
}

namespace {

// "eps=1e-6" -> {"eps", 1e-6}; UsageError when it is not NAME=NUMBER.
std::pair<std::string, double> parse_param(const std::string& text) {
  const auto eq = text.find('=');
  const std::string name = eq == std::string::npos ? "" : text.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (name.empty() || value.empty() || used != value.size())
    throw UsageError("--param expects NAME=NUMBER (e.g. eps=1e-6), got '" + text + "'");
  return {name, v};
}

template <class List, class T>
bool contains(const List& list, const T& x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

}  // namespace

SweepSettings resolve_sweep_settings(const SweepOptions& o) {
  // A name given twice would be run twice (--variant cub --variant cub timed cub twice).
  for (const auto* list : {&o.ops, &o.variants, &o.dtypes, &o.shapes})
    for (std::size_t i = 0; i < list->size(); ++i)
      if (std::find(list->begin(), list->begin() + static_cast<std::ptrdiff_t>(i), (*list)[i]) !=
          list->begin() + static_cast<std::ptrdiff_t>(i))
        throw UsageError("'" + (*list)[i] + "' is given twice");
  SweepSettings s;
  std::string config = o.config;
  if (config.empty() && o.ops.empty()) config = (source_root() / "configs" / "quick.json").string();
  if (!config.empty()) s = load_sweep_config(config);

  std::vector<DType> dtypes;
  for (const auto& d : o.dtypes) dtypes.push_back(parse_dtype(d));
  std::vector<std::vector<std::int64_t>> shapes;
  for (const auto& sh : o.shapes) shapes.push_back(parse_shape(sh));
  std::map<std::string, double> params;
  for (const auto& p : o.params) params.insert(parse_param(p));

  if (config.empty()) {  // cases from the flags alone
    if (shapes.empty()) throw UsageError("--op without --config needs --shape");
    for (const auto& op : o.ops)
      s.cases.push_back(CaseSpec{op, dtypes.empty() ? std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)) : dtypes,
                                 shapes, o.variants, params});
  } else {
    // The flags filter the config's cases (each keeps its own variant list, narrowed): they
    // never widen one case to another's dtypes or shapes, where two cases would then overlap
    // and one's variants would be lost.
    std::vector<CaseSpec> kept;
    for (auto c : s.cases) {
      if (!o.ops.empty() && std::find(o.ops.begin(), o.ops.end(), c.op) == o.ops.end()) continue;
      if (!dtypes.empty()) std::erase_if(c.dtypes, [&](DType t) { return !contains(dtypes, t); });
      if (!shapes.empty()) std::erase_if(c.shapes, [&](const auto& sh) { return !contains(shapes, sh); });
      if (!o.variants.empty()) {
        if (c.variants.empty()) c.variants = o.variants;  // the case runs every variant
        else std::erase_if(c.variants, [&](const std::string& v) { return !contains(o.variants, v); });
      }
      if (c.dtypes.empty() || c.shapes.empty() || (!o.variants.empty() && c.variants.empty())) continue;
      for (const auto& [name, value] : params) c.params[name] = value;
      kept.push_back(std::move(c));
    }
    const auto not_in_config = [&](const std::string& what) {
      return UsageError(what + " is not in config '" + config + "' (among the cases the other filters keep)");
    };
    for (const auto& op : o.ops)
      if (std::none_of(s.cases.begin(), s.cases.end(), [&](const CaseSpec& c) { return c.op == op; }))
        throw not_in_config("op '" + op + "'");
    for (std::size_t i = 0; i < dtypes.size(); ++i)
      if (std::none_of(kept.begin(), kept.end(), [&](const CaseSpec& c) { return contains(c.dtypes, dtypes[i]); }))
        throw not_in_config("dtype '" + o.dtypes[i] + "'");
    for (std::size_t i = 0; i < shapes.size(); ++i)
      if (std::none_of(kept.begin(), kept.end(), [&](const CaseSpec& c) { return contains(c.shapes, shapes[i]); }))
        throw not_in_config("shape '" + o.shapes[i] + "'");
    if (kept.empty()) throw UsageError("no case of config '" + config + "' passes the filters given");
    s.cases = std::move(kept);
  }
  if (!o.cache.empty()) s.caches = parse_cache_modes(o.cache);
  if (!o.timer.empty()) s.timers = parse_timers(o.timer);
  if (o.visits > 0) s.visits = o.visits;
  if (o.samples > 0) s.samples = o.samples;
  if (o.seed >= 0) s.seed = static_cast<std::uint64_t>(o.seed);
  s.device = o.device;
  s.roofline = !o.no_roofline;
  if (o.clock_floor >= 0) s.clock_floor = o.clock_floor;
  if (o.until_noise_pct == 0 && (o.max_visits > 0 || o.min_seconds > 0))
    throw UsageError("--max-visits and --min-seconds apply to --until-noise only");
  if (o.until_noise_pct > 0) {
    s.until.target = o.until_noise_pct / 100;
    s.until.max_visits = o.max_visits > 0 ? o.max_visits : std::min(10 * s.visits, kMaxVisitsOrSamples);
    s.until.min_seconds = o.min_seconds;
    if (s.until.max_visits < s.visits)
      throw UsageError("--max-visits " + std::to_string(s.until.max_visits) + " is below the planned visits (" +
                       std::to_string(s.visits) + ")");
  }
  s.plugins = load_plugin_options(o);
  return s;
}

nlohmann::json load_plugin_options(const SweepOptions& o) {
  if (o.plugins.empty()) return nlohmann::json::array();
  return load_plugins(o.plugins, registry_for_plugins()).libraries;
}

}  // namespace kbench
