#include "experiments/sweep.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/errors.hpp"
#include "core/stats.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {

namespace {

constexpr std::int64_t kRooflineElements = std::int64_t{1} << 28;

bool has_copy_roofline(const SweepSettings& s) {
  return std::any_of(s.cases.begin(), s.cases.end(), [](const CaseSpec& c) { return c.op == "copy"; });
}

// The elements of each stream of a stream kernel that moves `bytes` in `mix` (float32).
std::int64_t roofline_elements(double bytes, TrafficMix mix) {
  return std::max<std::int64_t>(1, std::llround(bytes / (4.0 * (mix.reads + mix.writes))));
}

// The same-traffic roofline of case c of op: the stream of its mix at its bytes; none where the
// op declares no mix.
std::optional<Case> roofline_case(const Problem& op, const Case& c) {
  const TrafficMix mix = op.traffic(c);
  if (!mix.any()) return std::nullopt;
  const Op& stream = registry().op("stream");
  return make_case(stream, DType::f32, {roofline_elements(op.bytes(c), mix)},
                   {{"reads", mix.reads}, {"writes", mix.writes}});
}

std::vector<MeasuredCase> plan_cases(const SweepSettings& s) {
  const Registry& reg = registry();
  std::vector<CaseSpec> specs = s.cases;
  if (s.roofline && !has_copy_roofline(s)) specs.push_back(CaseSpec{"copy", {DType::f32}, {{kRooflineElements}}, {}});
  std::vector<MeasuredCase> out;
  std::set<std::string> seen;
  for (const auto& spec : specs) {
    const Op& op = reg.op(spec.op);
    std::vector<const Variant*> chosen;
    if (spec.variants.empty()) chosen = reg.variants(spec.op);
    for (const auto& name : spec.variants) chosen.push_back(&reg.variant(spec.op, name));
    for (DType d : spec.dtypes)
      for (const auto& shape : spec.shapes) {
        MeasuredCase mc{&op, make_case(op, d, shape, spec.params), {}, {}};
        if (!seen.insert(case_label(mc.c)).second) continue;  // listed twice
        for (const Variant* v : chosen) {
          const std::string why = v->unsupported(mc.c);
          if (why.empty()) mc.variants.push_back(v);
          else mc.skipped.push_back(v->name + ": " + why);
        }
        // A case no variant can serve is a bad request, not a run of skips.
        if (mc.variants.empty())
          throw UsageError("no variant can run " + case_label(mc.c) + " (" + mc.skipped.front() + ")");
        out.push_back(std::move(mc));
      }
  }
  if (!s.roofline) return out;
  // Every memory-bound case's same-traffic stream, once per mix and size, all its variants.
  const Op& stream = reg.op("stream");
  const std::size_t planned = out.size();
  for (std::size_t i = 0; i < planned; ++i) {
    const std::optional<Case> roof = roofline_case(*out[i].problem, out[i].c);
    if (!roof || !seen.insert(case_label(*roof)).second) continue;
    MeasuredCase mc{&stream, *roof, {}, {}};
    for (const Variant* v : reg.variants("stream")) mc.variants.push_back(v);
    out.push_back(std::move(mc));
  }
  return out;
}

// copy_fraction: against the fastest copy variant at the largest copy of the run, in the same
// cache mode and timer. The fastest, not memcpy alone: inside a CUDA graph a memcpy node ran
// at 2.7 TB/s on an H200 where the copy kernel and a streamed memcpy reach 3.9-4.2 TB/s.
void fill_copy_fractions(std::vector<Record>& records) {
  std::map<std::pair<std::string, std::string>, const Record*> roof;
  for (const auto& r : records) {
    if (r.op != "copy") continue;
    auto& best = roof[{r.cache, r.timer}];
    if (!best || r.bytes > best->bytes || (r.bytes == best->bytes && r.gbps > best->gbps)) best = &r;
  }
  for (auto& r : records) {
    const auto it = roof.find({r.cache, r.timer});
    if (it != roof.end() && it->second->gbps > 0) r.copy_fraction = r.gbps / it->second->gbps;
  }
}

// roofline: against the fastest stream variant of the record's mix at its bytes, in the same
// cache mode and timer (the stream cases plan_cases added).
void fill_rooflines(std::vector<Record>& records) {
  using Key = std::tuple<std::string, std::string, int, int, std::int64_t>;  // cache, timer, reads, writes, n
  std::map<Key, const Record*> best;
  for (const Record& r : records) {
    if (r.op != "stream" || r.shape.empty() || !r.params.count("reads") || !r.params.count("writes")) continue;
    const Key key{r.cache, r.timer, static_cast<int>(r.params.at("reads")), static_cast<int>(r.params.at("writes")), r.shape[0]};
    const Record*& b = best[key];
    if (r.check.passed && (!b || r.gbps > b->gbps)) b = &r;
  }
  const Registry& reg = registry();
  for (Record& r : records) {
    if (r.op == "stream") continue;
    const Op& op = reg.op(r.op);
    const Case c = make_case(op, parse_dtype(r.dtype), r.shape, r.params);
    const std::optional<Case> roof = roofline_case(op, c);
    if (!roof) continue;
    const TrafficMix mix = op.traffic(c);
    const auto it = best.find(Key{r.cache, r.timer, mix.reads, mix.writes, roof->shape.at(0)});
    if (it == best.end() || !it->second || it->second->gbps <= 0) continue;
    r.roofline = {{"mix", mix.label()}, {"elements", roof->shape.at(0)}, {"variant", it->second->variant},
                  {"gbps", it->second->gbps}, {"fraction", r.gbps / it->second->gbps}};
  }
}

bool same_case(const Record& a, const Record& b) {
  return a.op == b.op && a.dtype == b.dtype && a.shape == b.shape && a.cache == b.cache;
}

// Per case, cache mode and timer: every non-baseline variant against every baseline, by the
// ratio of their per-visit medians (the variants of a visit ran back to back).
nlohmann::json comparisons(const std::vector<Record>& records) {
  nlohmann::json out = nlohmann::json::array();
  for (const Record& b : records) {
    if (!b.baseline) continue;
    for (const Record& k : records) {
      if (k.baseline || !same_case(b, k) || k.timer != b.timer) continue;
      const PairedRatio pr = paired_ratio(b.samples_us, b.sample_visits, k.samples_us, k.sample_visits);
      out.push_back({{"op", k.op}, {"dtype", k.dtype}, {"shape", k.shape}, {"cache", k.cache}, {"timer", k.timer},
                     {"baseline", b.variant}, {"variant", k.variant}, {"speedup_median", pr.median},
                     {"speedup_interval", {pr.lo, pr.hi}}, {"interval_coverage", pr.coverage},
                     {"visits", pr.visits}});
    }
  }
  return out;
}

// events minus graph medians, for each variant and cache mode timed with both.
nlohmann::json launch_overhead(const std::vector<Record>& records) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : records) {
    if (e.timer != "events") continue;
    for (const auto& g : records)
      if (g.timer == "graph" && g.variant == e.variant && same_case(g, e))
        out.push_back({{"op", e.op}, {"variant", e.variant}, {"dtype", e.dtype}, {"shape", e.shape},
                       {"cache", e.cache}, {"events_us", e.median_us}, {"graph_us", g.median_us},
                       {"overhead_us", e.median_us - g.median_us}});
  }
  return out;
}

// A loaded plugin variant that no case of the plan runs (its op is not among the cases, the
// default config's copy and add say, or every case skips it) would pass unseen: one line each.
void warn_unplanned_plugin_variants(const nlohmann::json& plugins, const std::vector<MeasuredCase>& cases) {
  for (const auto& library : plugins)
    for (const auto& entry : library.at("variants")) {
      const std::string full = entry.get<std::string>();  // "<op>/plugin.<name>"
      const std::string op = full.substr(0, full.find('/')), variant = full.substr(full.find('/') + 1);
      const bool planned = std::any_of(cases.begin(), cases.end(), [&](const MeasuredCase& mc) {
        return mc.c.op == op &&
               std::any_of(mc.variants.begin(), mc.variants.end(), [&](const Launchable* v) { return v->name == variant; });
      });
      if (!planned)
        spdlog::warn("{} runs in no case of this plan (op '{}' is not among its cases, or each case skips it): "
                     "add --op {} with --shape",
                     variant, op, op);
    }
}

nlohmann::json settings_json(const SweepSettings& s) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : s.cases) {
    nlohmann::json dts = nlohmann::json::array();
    for (auto d : c.dtypes) dts.push_back(dtype_name(d));
    cases.push_back({{"op", c.op}, {"dtypes", dts}, {"shapes", c.shapes}, {"variants", c.variants}, {"params", c.params}});
  }
  return {{"config", s.config_path}, {"description", s.description}, {"cases", cases},
          {"cache", s.caches}, {"timer", s.timers}, {"visits", s.visits}, {"samples", s.samples},
          {"device", s.device}, {"roofline", s.roofline}, {"clock_floor", s.clock_floor},
          {"until_noise", s.until.target}, {"max_visits", s.until.max_visits}, {"min_seconds", s.until.min_seconds}};
}

}  // namespace

Experiment sweep_experiment(const SweepSettings& s) {
  Experiment e;
  e.name = s.experiment;
  e.sources = {"experiments/sweep"};  // sweep.* and sweep_config.*
  e.settings = settings_json(s);
  e.how = Measurement{s.caches, s.timers, s.visits, s.samples, s.seed, s.device, s.clock_floor, s.until};
  e.cases = plan_cases(s);
  e.analyse = sweep_analysis;
  // Plugin variants: the libraries' paths and hashes beside the commit in meta, and the adapter
  // that launches them among the measured sources of every op.
  if (!s.plugins.empty()) {
    e.meta["plugins"] = s.plugins;
    e.sources.push_back("src/plugin/");
    warn_unplanned_plugin_variants(s.plugins, e.cases);
  }
  return e;
}

void sweep_analysis(Result& r) {
  fill_copy_fractions(r.records);
  fill_rooflines(r.records);
  r.extra["comparisons"] = comparisons(r.records);
  r.extra["launch_overhead"] = launch_overhead(r.records);
}

}  // namespace kbench
