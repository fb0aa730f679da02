#include "harness/dry_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "device/warmup.hpp"

namespace kbench {

namespace {

// The estimate's constants (the model is in dry_run.hpp). Bandwidth: the H200's copy reached
// 3.9-4.2 TB/s (experiments/sweep.cpp). Launch floor: an empty kernel is ~0.6 us per launch in
// graph replay; an event pair adds ~2.7 us (DESIGN.md). The round trip (host release, sync,
// reading the events) and the preparation rate were set so that configs/rows.json comes out
// near its H200 run (results/sweep/sweep-20261201T082006Z-d6f002.json: 82.5 s preparing,
// 19.6 s timing; the estimate says 84 + 17 s). The four other saved H200 sweeps come out
// within 35% in all (foundation 114 s against 113, side_by_side_steps 78 against 117); other
// hosts will differ more: preparation runs on the host's cores.
constexpr double kAssumedBytesPerS = 4.0e12;
// Ops that count flops (GEMM) are bound by them: configs/gemm.json's H200 run timed 51.2 s
// (results/sweep/sweep-20261201T183154Z-351776.json) where bytes alone gave 16 s and this
// gives 34 s (its exact float32 SIMT variant runs at 17-33 TFLOP/s, far under the rate assumed).
constexpr double kAssumedFlopsPerS = 400e12;
constexpr double kLaunchFloorUs = 0.6;
constexpr double kEventPairUs = 2.7;
constexpr double kHostRoundTripUs = 50;
// A cupti sample turns activity collection on and off and flushes CUPTI's buffers: host work
// of the order of a few host round trips (to be set against a measured run).
constexpr double kCuptiSampleUs = 4 * kHostRoundTripUs;
constexpr double kPrepNsPerElement = 6;
constexpr double kStartupS = 2;

double launch_us(const MeasuredCase& mc) {
  const double flops = mc.problem->flops ? mc.problem->flops(mc.c) : 0.0;
  return std::max({mc.problem->bytes(mc.c) / kAssumedBytesPerS * 1e6, flops / kAssumedFlopsPerS * 1e6, kLaunchFloorUs});
}

double footprint_bytes(const MeasuredCase& mc) {
  double b = 0;
  for (const auto* list : {&mc.problem->inputs, &mc.problem->outputs})
    for (const TensorDesc& t : (*list)(mc.c)) b += static_cast<double>(t.span_elements()) * dtype_size(t.dtype);
  return b;
}

double elements(const MeasuredCase& mc) {
  double n = 0;
  for (const auto* list : {&mc.problem->inputs, &mc.problem->outputs})
    for (const TensorDesc& t : (*list)(mc.c)) n += static_cast<double>(t.elements());
  return n;
}

// Streaming twice the L2 (harness/l2_flush.hpp), plus its launch.
double flush_us(const DeviceLimits& dev) {
  return 2.0 * static_cast<double>(dev.l2_bytes) / kAssumedBytesPerS * 1e6 + kLaunchFloorUs;
}

// One sample's wall time, as harness/runner.cpp builds the timer.
double sample_us(const MeasuredCase& mc, const std::string& cache, const std::string& timer,
                 const DeviceLimits& dev) {
  const double launch = launch_us(mc);
  const bool cold = cache == "cold";
  if (timer == "events") return launch + kEventPairUs + kHostRoundTripUs + (cold ? flush_us(dev) : 0);
  if (timer == "cupti") return launch + kCuptiSampleUs + (cold ? flush_us(dev) : 0);
  // Cold graphs rotate through input sets of at least 3x L2 in all, each launched once at least.
  const double sets = cold ? 1 + std::ceil(3.0 * dev.l2_bytes / std::max(footprint_bytes(mc), 1.0)) : 1;
  const double count = graph_launch_count(launch, static_cast<int>(sets));
  return count * launch + kHostRoundTripUs;
}

// An empty launch timed as a floor sample: events pay the flush when cold, graphs replay the
// most launches (harness/timer_floor.hpp).
double floor_sample_us(const std::string& cache, const std::string& timer, const DeviceLimits& dev) {
  if (timer == "events")
    return kLaunchFloorUs + kEventPairUs + kHostRoundTripUs + (cache == "cold" ? flush_us(dev) : 0);
  if (timer == "cupti") return kLaunchFloorUs + kCuptiSampleUs + (cache == "cold" ? flush_us(dev) : 0);
  return kMaxGraphLaunches * kLaunchFloorUs + kHostRoundTripUs;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

PlanEstimate estimate_plan(const Experiment& e, const DeviceLimits& dev) {
  PlanEstimate p;
  const Measurement& how = e.how;
  for (std::size_t i = 0; i < e.cases.size(); ++i) {
    const MeasuredCase& mc = e.cases[i];
    const double passes = 1.0 + static_cast<double>(mc.variants.size());
    p.preparation_s += elements(mc) * passes * kPrepNsPerElement * 1e-9;
    for (const auto& cache : how.caches)
      for (const auto& timer : how.timers) {
        PlanUnit u{i, cache, timer, 0, 0};
        const std::int64_t per_variant = std::int64_t{how.visits} * how.samples;
        u.timed_samples = per_variant * static_cast<std::int64_t>(mc.variants.size());
        // Each visit also opens with one untimed launch (a replay, for graphs) of each variant.
        const double primes = static_cast<double>(how.visits) * static_cast<double>(mc.variants.size());
        u.timing_s = (static_cast<double>(u.timed_samples) + primes) * sample_us(mc, cache, timer, dev) * 1e-6;
        // And times an empty kernel, one prime and `samples` samples: the visit's floor.
        u.timing_s += static_cast<double>(how.visits) * (how.samples + 1) * floor_sample_us(cache, timer, dev) * 1e-6;
        p.timed_samples += u.timed_samples;
        p.timing_s += u.timing_s;
        p.units.push_back(std::move(u));
      }
  }
  p.fixed_s = kStartupS + 2 * kWarmupMinMs * 1e-3;
  for (const auto& cache : how.caches)
    for (const auto& timer : how.timers)
      p.fixed_s += 3.0 * how.visits * how.samples * floor_sample_us(cache, timer, dev) * 1e-6;
  return p;
}

std::string describe_plan(const Experiment& e, const DeviceLimits& dev, const std::string& limits_source) {
  const PlanEstimate p = estimate_plan(e, dev);
  const Measurement& how = e.how;
  std::string out;
  char buf[512];
  const auto line = [&](const std::string& text) { out += text + "\n"; };
  line("dry run of experiment '" + e.name + "': the plan only, nothing is measured or written");
  std::snprintf(buf, sizeof buf, "device limits from %s: %d SMs, %d threads per SM, L2 %.0f MiB", limits_source.c_str(),
                dev.sms, dev.max_threads_per_sm, static_cast<double>(dev.l2_bytes) / (1 << 20));
  line(buf);
  std::snprintf(buf, sizeof buf, "%zu case(s) x cache %s x timer %s; each variant %d visits x %d samples; seed %llu",
                e.cases.size(), join(how.caches).c_str(), join(how.timers).c_str(), how.visits, how.samples,
                static_cast<unsigned long long>(how.seed));
  line(buf);
  if (how.until.target > 0) {
    std::snprintf(buf, sizeof buf,
                  "stopping rule: then more visits, up to %d a case, until every variant's per-visit medians are "
                  "within %.2f%% (at least %.0f s of visits); the estimate below is for the planned visits",
                  how.until.max_visits, 100 * how.until.target, how.until.min_seconds);
    line(buf);
  }
  std::snprintf(buf, sizeof buf, "%-44s %-5s %-6s %8s %8s %9s  %s", "case", "cache", "timer", "v x s", "samples",
                "est_s", "variants");
  line(buf);
  for (std::size_t u = 0; u < p.units.size(); ++u) {
    const PlanUnit& unit = p.units[u];
    const MeasuredCase& mc = e.cases[unit.case_index];
    std::vector<std::string> names;
    for (const Launchable* v : mc.variants) names.push_back(v->name);
    const std::string vs = std::to_string(how.visits) + "x" + std::to_string(how.samples);
    std::snprintf(buf, sizeof buf, "%-44s %-5s %-6s %8s %8lld %9.2f  %s", case_label(mc.c).c_str(),
                  unit.cache.c_str(), unit.timer.c_str(), vs.c_str(), static_cast<long long>(unit.timed_samples),
                  unit.timing_s, join(names).c_str());
    line(buf);
    const bool last_of_case = u + 1 == p.units.size() || p.units[u + 1].case_index != unit.case_index;
    if (last_of_case)
      for (const auto& skip : mc.skipped) line("  skip " + case_label(mc.c) + " " + skip);
  }
  std::snprintf(buf, sizeof buf, "total: %zu unit(s), %lld timed samples", p.units.size(),
                static_cast<long long>(p.timed_samples));
  line(buf);
  std::snprintf(buf, sizeof buf,
                "estimate (a rough model, not a measurement): %.0f s = preparation %.1f s + start-up, warm-up and "
                "timer floors %.1f s + timing %.1f s",
                p.total_s(), p.preparation_s, p.fixed_s, p.timing_s);
  line(buf);
  std::snprintf(buf, sizeof buf,
                "  model: preparation %.0f ns per input/output element per pass (1 + variants); a launch = bytes at "
                "%.1f TB/s or flops at %.0f TFLOP/s (assumed), at least %.1f us; events sample = launch + %.1f us event pair + %.0f us host, "
                "cold adds a flush of 2x L2; graph sample = ~%.0f us of launches + %.0f us host; plus %.0f s start-up "
                "and 2 x %.0f ms warm-up",
                kPrepNsPerElement, kAssumedBytesPerS / 1e12, kAssumedFlopsPerS / 1e12, kLaunchFloorUs, kEventPairUs,
                kHostRoundTripUs,
                kGraphTargetUs, kHostRoundTripUs, kStartupS, kWarmupMinMs);
  line(buf);
  return out;
}

nlohmann::json plan_json(const Experiment& e) {
  nlohmann::json cases = nlohmann::json::array();
  for (const MeasuredCase& mc : e.cases) {
    nlohmann::json variants = nlohmann::json::array();
    for (const Launchable* v : mc.variants) variants.push_back(v->name);
    // Counts as whole numbers where they are (every op's are): a record's bytes as a caller gives them.
    const auto count = [](double v) {
      return v == std::floor(v) && std::fabs(v) < 9.0e15 ? nlohmann::json(static_cast<std::int64_t>(v))
                                                         : nlohmann::json(v);
    };
    cases.push_back({{"op", mc.c.op},
                     {"dtype", dtype_name(mc.c.dtype)},
                     {"shape", mc.c.shape},
                     {"params", mc.c.params},
                     {"bytes", count(mc.problem->bytes(mc.c))},
                     {"flops", count(mc.problem->flops ? mc.problem->flops(mc.c) : 0.0)},
                     {"variants", variants},
                     {"skipped", mc.skipped}});
  }
  return {{"schema", "kbench/plan/v1"},
          {"experiment", e.name},
          {"description", e.settings.value("description", "")},
          {"cache", e.how.caches},
          {"timer", e.how.timers},
          {"visits", e.how.visits},
          {"samples", e.how.samples},
          {"seed", e.how.seed},
          {"cases", cases}};
}

}  // namespace kbench
