// kbench run: the operator sweep.
//
// 1. Plan: expand the config into cases; reject unknown ops, variants and bad shapes up front.
// 2. Prepare and check every case before any timing: fresh random inputs, the FP64 oracle,
//    NaN-poisoned outputs, every element compared. A variant that fails is never timed.
// 3. Build the timers (graphs are captured and uploaded here), then warm the GPU until its
//    SM clock is steady, so the first timed visits do not run at idle clocks.
// 4. Time in randomized visits (harness/schedule.hpp) and keep every raw sample.
// 5. Summarize: median, quartiles, min, GB/s, fraction of this run's copy bandwidth, paired
//    per-visit ratios against each baseline, and events-minus-graph launch overhead.
#include "experiments/sweep.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "device/clock.hpp"
#include "device/device_info.hpp"
#include "device/gpu_load.hpp"
#include "device/warmup.hpp"
#include "experiments/timer_floor.hpp"
#include "harness/l2_flush.hpp"
#include "kernels/all_ops.hpp"
#include "harness/prepare.hpp"
#include "harness/schedule.hpp"
#include "harness/stats.hpp"
#include "harness/timers.hpp"
#include "record/manifest.hpp"
#include "record/provenance.hpp"

namespace kbench {

namespace {

// A graph replay of about 2 ms: long against event resolution (~0.5 us) and the replay's own
// start, short enough that a visit stays a burst.
constexpr double kGraphTargetUs = 2000;
constexpr int kMinGraphLaunches = 4;
constexpr int kMaxGraphLaunches = 500;
constexpr std::int64_t kRooflineElements = std::int64_t{1} << 28;
// A timer floor that moves by more than this during preparation or during the visits is
// reported (extra.timer_floor_shifts); within one process its samples agree to a few percent.
constexpr double kFloorTolerance = 0.10;

struct Prepared {
  PlannedCase plan;
  PreparedCase data;
  std::vector<const Variant*> timed;  // the variants that passed their check
  std::vector<CheckInfo> checks;      // parallel to timed
  std::vector<DeviceBuffer> workspaces;
};

struct Unit {  // one prepared case in one cache mode with one timer
  Prepared* prepared = nullptr;
  std::string cache, timer;
  std::vector<std::unique_ptr<Timer>> timers;  // parallel to prepared->timed
  std::vector<std::vector<double>> samples;
  std::vector<std::vector<int>> visits;
};

class Stream {
 public:
  Stream() { KB_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_{};
};

bool has_copy_roofline(const SweepSettings& s) {
  return std::any_of(s.cases.begin(), s.cases.end(), [](const CaseSpec& c) { return c.op == "copy"; });
}

SetLauncher launcher_for(const Prepared& p, const Variant* v, void* workspace) {
  const Case* c = &p.data.c;
  return [c, v, workspace](const DeviceSet& set, cudaStream_t s) {
    v->launch(LaunchArgs{*c, set.input_views, set.output_views, workspace, s});
  };
}

std::unique_ptr<Timer> build_timer(const Prepared& p, std::size_t k, const std::string& cache,
                                   const std::string& timer, const L2Flusher& flusher,
                                   cudaStream_t stream) {
  const SetLauncher launch = launcher_for(p, p.timed[k], p.workspaces[k].get());
  const bool cold = cache == "cold";
  if (timer == "events") return make_event_timer(launch, p.data.primary, cold ? &flusher : nullptr, stream);
  std::vector<const DeviceSet*> sets{&p.data.primary};
  if (cold)
    for (const auto& r : p.data.rotation) sets.push_back(&r);
  const double est_us = std::max(estimate_launch_us(launch, p.data.primary, stream), 0.5);
  int count = static_cast<int>(std::ceil(kGraphTargetUs / est_us));
  count = std::clamp(count, kMinGraphLaunches, kMaxGraphLaunches);
  count = std::max<int>(count, static_cast<int>(sets.size()));  // every set at least once
  return make_graph_timer(launch, sets, count, cold, stream);
}

void progress(std::size_t done, std::size_t total, const Unit& u) {
  static const bool tty = isatty(fileno(stderr)) && spdlog::get_level() <= spdlog::level::info;
  if (!tty) return;
  std::fprintf(stderr, "\r\033[K[%zu/%zu] %s %s %s", done, total,
               case_label(u.prepared->data.c).c_str(), u.cache.c_str(), u.timer.c_str());
  if (done == total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

Record make_record(const Unit& u, std::size_t k) {
  const Prepared& p = *u.prepared;
  const Case& c = p.data.c;
  const Variant& v = *p.timed[k];
  Record r;
  r.op = c.op;
  r.variant = v.name;
  r.baseline = v.baseline;
  r.dtype = std::string(dtype_name(c.dtype));
  r.shape = c.shape;
  r.cache = u.cache;
  r.timer = u.timer;
  r.timer_note = u.timers[k]->note();
  r.launches_per_sample = u.timers[k]->launches_per_sample();
  r.samples_us = u.samples[k];
  r.sample_visits = u.visits[k];
  const Summary s = summarize(r.samples_us);
  r.median_us = s.median;
  r.q1_us = s.q1;
  r.q3_us = s.q3;
  r.min_us = s.min;
  r.bytes = p.data.op->bytes(c);
  r.flops = p.data.op->flops(c);
  r.gbps = r.bytes / (r.median_us * 1e3);
  r.tflops = r.flops / (r.median_us * 1e6);
  r.check = p.checks[k];
  return r;
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

nlohmann::json comparisons(const std::vector<Unit>& units, std::uint64_t seed) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& u : units) {
    const auto& timed = u.prepared->timed;
    for (std::size_t b = 0; b < timed.size(); ++b) {
      if (!timed[b]->baseline) continue;
      for (std::size_t k = 0; k < timed.size(); ++k) {
        if (timed[k]->baseline) continue;
        const PairedRatio pr = paired_ratio(u.samples[b], u.visits[b], u.samples[k], u.visits[k], seed);
        const Case& c = u.prepared->data.c;
        out.push_back({{"op", c.op}, {"dtype", dtype_name(c.dtype)}, {"shape", c.shape},
                       {"cache", u.cache}, {"timer", u.timer}, {"baseline", timed[b]->name},
                       {"variant", timed[k]->name}, {"speedup_median", pr.median},
                       {"speedup_ci95", {pr.lo, pr.hi}}, {"visits", pr.visits}});
      }
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
      if (g.timer == "graph" && g.op == e.op && g.variant == e.variant && g.dtype == e.dtype &&
          g.shape == e.shape && g.cache == e.cache)
        out.push_back({{"op", e.op}, {"variant", e.variant}, {"dtype", e.dtype}, {"shape", e.shape},
                       {"cache", e.cache}, {"events_us", e.median_us}, {"graph_us", g.median_us},
                       {"overhead_us", e.median_us - g.median_us}});
  }
  return out;
}

nlohmann::json settings_json(const SweepSettings& s) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : s.cases) {
    nlohmann::json dts = nlohmann::json::array();
    for (auto d : c.dtypes) dts.push_back(dtype_name(d));
    cases.push_back({{"op", c.op}, {"dtypes", dts}, {"shapes", c.shapes}, {"variants", c.variants}});
  }
  return {{"config", s.config_path}, {"description", s.description}, {"cases", cases},
          {"cache", s.caches}, {"timer", s.timers}, {"visits", s.visits}, {"samples", s.samples},
          {"device", s.device}, {"roofline", s.roofline}};
}

// Prepares every planned case and checks each of its variants against the oracle.
std::vector<std::unique_ptr<Prepared>> prepare_all(const std::vector<PlannedCase>& plan,
                                                   std::uint64_t seed, cudaStream_t stream,
                                                   nlohmann::json& failures) {
  std::vector<std::unique_ptr<Prepared>> out;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto p = std::make_unique<Prepared>();
    p->plan = plan[i];
    Rng rng(seed ^ (0x9e3779b97f4a7c15ULL * (i + 1)));
    spdlog::debug("preparing {}", case_label(plan[i].c));
    p->data = prepare_case(registry().op(plan[i].c.op), plan[i].c, rng);
    for (const Variant* v : plan[i].variants) {
      const CheckInfo info = check_variant(p->data, *v, stream);
      if (!info.passed) {
        spdlog::error("check failed: {} {}: {}", case_label(plan[i].c), v->name, info.detail);
        failures.push_back({{"op", plan[i].c.op}, {"variant", v->name},
                            {"dtype", dtype_name(plan[i].c.dtype)}, {"shape", plan[i].c.shape},
                            {"detail", info.detail}});
        continue;
      }
      p->timed.push_back(v);
      p->checks.push_back(info);
      p->workspaces.push_back(DeviceBuffer::zeroed(v->workspace_bytes(plan[i].c)));
    }
    p->data.expected.clear();  // the oracle's host copy is not needed once checked
    p->data.expected.shrink_to_fit();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::vector<PlannedCase> plan_cases(const SweepSettings& s) {
  const Registry& reg = registry();
  std::vector<CaseSpec> specs = s.cases;
  if (s.roofline && !has_copy_roofline(s))
    specs.push_back(CaseSpec{"copy", {DType::f32}, {{kRooflineElements}}, {}});
  std::vector<PlannedCase> out;
  std::set<std::string> seen;
  for (const auto& spec : specs) {
    const Op& op = reg.op(spec.op);
    std::vector<const Variant*> chosen;
    if (spec.variants.empty()) chosen = reg.variants(spec.op);
    for (const auto& name : spec.variants) chosen.push_back(&reg.variant(spec.op, name));
    for (DType d : spec.dtypes)
      for (const auto& shape : spec.shapes) {
        if (shape.size() != op.shape_rank)
          throw UsageError("op '" + op.name + "' takes " + std::to_string(op.shape_rank) +
                           "-dimensional shapes, got '" + shape_string(shape) + "'");
        PlannedCase pc{Case{op.name, d, shape}, {}, {}};
        if (!seen.insert(case_label(pc.c)).second) continue;  // listed twice
        for (const Variant* v : chosen) {
          const std::string why = v->unsupported(pc.c);
          if (why.empty()) pc.variants.push_back(v);
          else pc.skipped.push_back(v->name + ": " + why);
        }
        out.push_back(std::move(pc));
      }
  }
  return out;
}

bool run_checks(const SweepSettings& s, std::vector<std::string>& lines) {
  const auto plan = plan_cases(s);
  select_device(s.device);
  Stream stream;
  bool all = true;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    Rng rng(s.seed ^ (0x9e3779b97f4a7c15ULL * (i + 1)));
    PreparedCase pc = prepare_case(registry().op(plan[i].c.op), plan[i].c, rng);
    for (const Variant* v : plan[i].variants) {
      const CheckInfo info = check_variant(pc, *v, stream);
      all = all && info.passed;
      char buf[160];
      std::snprintf(buf, sizeof buf, "%-4s %-48s %-14s max_err %.3g (allowed %.3g)",
                    info.passed ? "ok" : "FAIL", case_label(plan[i].c).c_str(), v->name.c_str(),
                    info.max_err, info.tolerance);
      lines.push_back(std::string(buf) + (info.passed ? "" : ": " + info.detail));
    }
    for (const auto& skip : plan[i].skipped) lines.push_back("skip " + case_label(plan[i].c) + " " + skip);
  }
  return all;
}

Result run_sweep(const SweepSettings& s, const std::vector<std::string>& argv) {
  const auto plan = plan_cases(s);
  const int dev = select_device(s.device);
  Result result;
  result.experiment = s.experiment;
  result.meta = provenance();
  result.meta["argv"] = argv;
  result.meta["started"] = utc_now();
  result.meta["seed"] = s.seed;
  result.meta["settings"] = settings_json(s);
  result.device = device_block(dev);
  const std::string gpu_id = result.device.value("uuid", std::to_string(dev));
  const nlohmann::json load_before = query_gpu_load(gpu_id);

  Stream stream;
  const L2Flusher flusher(result.device.at("l2_bytes").get<std::size_t>());
  nlohmann::json failures = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& pc : plan)
    for (const auto& sk : pc.skipped) skipped.push_back(case_label(pc.c) + " " + sk);
  const auto floors_now = [&] {
    return measure_timer_floors(s.caches, s.timers, s.visits * s.samples, kMaxGraphLaunches,
                                flusher, stream);
  };
  // The per-launch floor can change at one check during preparation and then hold for the
  // rest of the process (0.51 against 0.68 us in graph replay on the H200, methodology.md §4),
  // so it is also taken before anything is prepared, on a warm GPU so that the clock is not
  // what differs.
  warm_up_gpu(stream);
  const nlohmann::json floors_start = floors_now();
  auto prepared = prepare_all(plan, s.seed, stream, failures);

  const bool cold_graph = std::count(s.caches.begin(), s.caches.end(), "cold") &&
                          std::count(s.timers.begin(), s.timers.end(), "graph");
  std::vector<Unit> units;
  for (auto& p : prepared) {
    if (p->timed.empty()) continue;
    if (cold_graph) add_rotation_sets(p->data, 3 * flusher.bytes() / 2, stream);  // 3x L2
    for (const auto& cache : s.caches)
      for (const auto& timer : s.timers) {
        Unit u{p.get(), cache, timer, {}, {}, {}};
        for (std::size_t k = 0; k < p->timed.size(); ++k)
          u.timers.push_back(build_timer(*p, k, cache, timer, flusher, stream));
        u.samples.resize(p->timed.size());
        u.visits.resize(p->timed.size());
        units.push_back(std::move(u));
      }
  }

  const WarmupResult warm = warm_up_gpu(stream);
  result.warmup = to_json(warm);
  spdlog::info("warm-up: {:.0f} ms, SM clock {:.0f} MHz{}", warm.ms, warm.sm_clock_mhz,
               warm.steady ? "" : " (not steady)");

  const nlohmann::json floors_before = floors_now();
  std::vector<std::string> floor_moves = floor_shifts(floors_start, floors_before, kFloorTolerance, "preparation");
  for (const auto& line : floor_moves) spdlog::warn("{}", line);
  // Everything before this (preparing and checking every case, building the timers, warm-up)
  // is host-bound; the visits are the GPU's. The two split a run's wall time.
  result.meta["visits_started"] = utc_now();

  std::vector<std::size_t> sizes;
  for (const auto& u : units) sizes.push_back(u.timers.size());
  const auto order = visit_order(sizes, s.visits, s.seed);
  for (std::size_t i = 0; i < order.size(); ++i) {
    Unit& u = units[order[i].unit];
    for (std::size_t k : order[i].variant_order)
      for (int n = 0; n < s.samples; ++n) {
        u.samples[k].push_back(u.timers[k]->sample_us());
        u.visits[k].push_back(order[i].number);
      }
    progress(i + 1, order.size(), u);
  }
  const nlohmann::json floors = floors_now();
  for (const auto& line : floor_shifts(floors_before, floors, kFloorTolerance, "the visits")) {
    spdlog::warn("{}", line);
    floor_moves.push_back(line);
  }
  result.warmup["sm_clock_mhz_after"] = measure_sm_clock_mhz(stream);

  for (const auto& u : units)
    for (std::size_t k = 0; k < u.timers.size(); ++k) result.records.push_back(make_record(u, k));
  fill_copy_fractions(result.records);

  std::map<std::string, std::vector<std::string>> op_sources;
  for (const auto& pc : plan) op_sources[pc.c.op] = registry().op(pc.c.op).sources;
  result.manifest = manifest_block(op_sources, {"experiments/sweep"});
  const nlohmann::json load_after = query_gpu_load(gpu_id);
  result.load = {{"before", load_before}, {"after", load_after},
                 {"warnings", load_warnings(load_before, load_after, static_cast<int>(getpid()))}};
  for (const auto& w : result.load["warnings"]) spdlog::warn("{}", w.get<std::string>());
  result.extra = {{"comparisons", comparisons(units, s.seed)},
                  {"launch_overhead", launch_overhead(result.records)},
                  {"timer_floor", floors},
                  {"timer_floor_before", floors_before},
                  {"timer_floor_start", floors_start},
                  {"timer_floor_shifts", floor_moves},
                  {"check_failures", failures}, {"skipped", skipped}};
  result.meta["finished"] = utc_now();
  return result;
}

}  // namespace kbench
