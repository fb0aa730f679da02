#include "harness/runner.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include <csignal>

#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "device/clock.hpp"
#include "device/device_info.hpp"
#include "device/gpu_load.hpp"
#include "device/warmup.hpp"
#include "harness/l2_flush.hpp"
#include "harness/prepare.hpp"
#include "harness/progress.hpp"
#include "harness/timer_floor.hpp"
#include "harness/cupti_timer.hpp"
#include "harness/timers.hpp"
#include "harness/units.hpp"
#include "harness/worker_steps.hpp"
#include "record/manifest.hpp"
#include "record/provenance.hpp"

namespace kbench {

namespace {

// A timer floor that moves by more than this during preparation or during the visits is
// reported (extra.timer_floor_shifts); within one process its samples agree to a few percent.
constexpr double kFloorTolerance = 0.10;

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

// A case prepared on the device, with the variants that passed their check.
struct Prepared {
  const MeasuredCase* mc = nullptr;
  PreparedCase data;
  std::vector<const Launchable*> passed;
  std::vector<CheckInfo> checks;          // parallel to passed
  std::vector<DeviceBuffer> workspaces;   // parallel to passed
  // Cold graph timing: each passed variant's workspace for each rotation set ([k][set - 1]; the
  // primary set keeps `workspaces`), so that a launch on a fresh set meets no workspace the last
  // launch left in L2 either (split-K partials, dw partials, B^T).
  std::vector<std::vector<DeviceBuffer>> rotation_workspaces;
};

// A timer that reports its variant's step (harness/worker_steps.hpp) before each launch, so that a
// worker that dies or hangs in the visits names the variant it was timing. Used only in a worker:
// a run in one process times its own timers, unwrapped.
class StepReportingTimer : public Timer {
 public:
  StepReportingTimer(std::unique_ptr<Timer> inner, const Case& c, std::string variant)
      : inner_(std::move(inner)), c_(c), variant_(std::move(variant)) {}
  double sample_us() override {
    report();
    return inner_->sample_us();
  }
  int launches_per_sample() const override { return inner_->launches_per_sample(); }
  std::string note() const override { return inner_->note(); }
  void prime() override {
    report();
    inner_->prime();
  }

 private:
  void report() const {
    if (variant_.empty()) report_step("floor");
    else report_variant_step("visit", c_, variant_);
  }
  std::unique_ptr<Timer> inner_;
  Case c_;
  std::string variant_;  // empty: the visit's floor (an empty kernel)
};

std::unique_ptr<Timer> reporting_steps_of(std::unique_ptr<Timer> t, const Case& c, const std::string& variant) {
  if (!reporting_steps()) return t;
  return std::make_unique<StepReportingTimer>(std::move(t), c, variant);
}

// Each case gets its own input stream, so a case's inputs do not depend on what came before.
Rng case_rng(std::uint64_t seed, std::size_t index) { return Rng(seed ^ (0x9e3779b97f4a7c15ULL * (index + 1))); }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Where the preparation's time went, summed over the cases: the log line shows it, so that a
// slow preparation says what to make faster.
struct PreparationSplit {
  PrepareSeconds cases;  // generate, upload, oracle
  double checks = 0;     // check_variant: two checked launches per variant
  double timers = 0;     // building the timers (graph capture and upload)
};

std::vector<std::unique_ptr<Prepared>> prepare_all(const Experiment& e, cudaStream_t stream,
                                                   nlohmann::json& failures, PreparationSplit& split) {
  std::vector<std::unique_ptr<Prepared>> out;
  const ExcludedVariants excluded = excluded_variants();
  // One phase: each case's checks follow its preparation, so that only one case's oracle output
  // is held on the host at a time.
  PhaseProgress progress(stderr_progress(), "preparing and checking", e.cases.size(), "cases");
  std::size_t checked = 0;
  for (std::size_t i = 0; i < e.cases.size(); ++i) {
    if (const int sig = interrupt_signal())
      throw Interrupted(std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + " during preparation (" + std::to_string(i) +
                            " of " + std::to_string(e.cases.size()) + " cases prepared): nothing was timed, nothing written",
                        sig);
    const MeasuredCase& mc = e.cases[i];
    auto p = std::make_unique<Prepared>();
    p->mc = &mc;
    Rng rng = case_rng(e.how.seed, mc.plan_index.value_or(i));
    spdlog::debug("preparing {}", case_label(mc.c));
    report_variant_step("prepare", mc.c, "");
    p->data = prepare_case(*mc.problem, mc.c, rng, {}, mc.check_rows);
    split.cases.generate += p->data.seconds.generate;
    split.cases.upload += p->data.seconds.upload;
    split.cases.oracle += p->data.seconds.oracle;
    const auto checks_began = std::chrono::steady_clock::now();
    for (const Launchable* v : mc.variants) {
      if (excluded.count({case_label(mc.c), v->name})) {
        spdlog::warn("{} {}: left out, it faulted in an earlier worker (extra.faults)", case_label(mc.c), v->name);
        continue;
      }
      report_variant_step("check", mc.c, v->name);
      spdlog::debug("checking {} {}", case_label(mc.c), v->name);  // with -v: a check that hangs is named
      const CheckInfo info = check_variant(p->data, *v, stream);
      ++checked;
      if (!info.passed) {
        spdlog::error("check failed: {} {}: {}", case_label(mc.c), v->name, info.detail);
        failures.push_back({{"op", mc.c.op}, {"variant", v->name}, {"dtype", dtype_name(mc.c.dtype)},
                            {"shape", mc.c.shape}, {"detail", info.detail}});
        continue;
      }
      p->passed.push_back(v);
      p->checks.push_back(info);
      p->workspaces.push_back(DeviceBuffer::zeroed(v->workspace_bytes(mc.c)));
    }
    split.checks += seconds_since(checks_began);
    p->data.expected.clear();  // the oracle's host copy is not needed once checked
    p->data.expected.shrink_to_fit();
    p->data.sample_staging = DeviceBuffer();
    out.push_back(std::move(p));
    progress.advance(i + 1, e.cases.size(), case_label(mc.c));
  }
  progress.finish(fmt::format("inputs {:.1f} s, oracle {:.1f} s, {} checks {:.1f} s",
                              split.cases.generate + split.cases.upload, split.cases.oracle, checked, split.checks));
  return out;
}

std::unique_ptr<Timer> build_timer(Prepared& p, std::size_t k, const std::string& cache, const std::string& timer,
                                   const L2Flusher& flusher, cudaStream_t stream) {
  const Case* c = &p.mc->c;
  const Launchable* v = p.passed[k];
  const bool cold = cache == "cold";
  std::vector<const DeviceSet*> sets{&p.data.primary};
  std::vector<void*> workspaces{p.workspaces[k].get()};  // parallel to sets
  if (cold && timer == "graph" && !p.data.rotation.empty()) {
    if (p.rotation_workspaces.size() < p.passed.size()) p.rotation_workspaces.resize(p.passed.size());
    std::vector<DeviceBuffer>& mine = p.rotation_workspaces[k];
    for (std::size_t r = 0; r < p.data.rotation.size(); ++r) {
      if (mine.size() <= r) mine.push_back(DeviceBuffer::zeroed(p.workspaces[k].size()));
      sets.push_back(&p.data.rotation[r]);
      workspaces.push_back(mine[r].get());
    }
  }
  const SetLauncher launch = [c, v, sets, workspaces](const DeviceSet& set, cudaStream_t s) {
    const auto at = std::find(sets.begin(), sets.end(), &set);
    void* const workspace = at == sets.end() ? workspaces.front() : workspaces[static_cast<std::size_t>(at - sets.begin())];
    v->launch(LaunchArgs{*c, set.input_views, set.output_views, workspace, s});
  };
  if (timer == "events") return make_event_timer(launch, p.data.primary, cold ? &flusher : nullptr, stream);
  if (timer == "cupti") return make_cupti_timer(launch, p.data.primary, cold ? &flusher : nullptr, stream);
  const int count = graph_launch_count(estimate_launch_us(launch, p.data.primary, stream), static_cast<int>(sets.size()));
  return make_graph_timer(launch, sets, count, cold, stream);
}

std::vector<Unit> build_units(const Experiment& e, std::vector<std::unique_ptr<Prepared>>& prepared,
                              const L2Flusher& flusher, cudaStream_t stream) {
  const auto has = [](const std::vector<std::string>& v, const char* x) { return std::count(v.begin(), v.end(), x) > 0; };
  const bool cold_graph = has(e.how.caches, "cold") && has(e.how.timers, "graph");
  std::vector<Unit> units;
  std::size_t planned = 0, built = 0;
  for (const auto& p : prepared) planned += p->passed.size() * e.how.caches.size() * e.how.timers.size();
  PhaseProgress progress(stderr_progress(), "building timers", planned, "timers");
  for (auto& p : prepared) {
    if (p->passed.empty()) continue;
    if (cold_graph) add_rotation_sets(p->data, kRotationL2Multiple * flusher.bytes() / kFlushL2Multiple, stream);
    for (const auto& cache : e.how.caches)
      for (const auto& timer : e.how.timers) {
        Unit u;
        u.problem = p->mc->problem;
        u.c = p->mc->c;
        u.cache = cache;
        u.timer = timer;
        u.variants = p->passed;
        u.checks = p->checks;
        for (std::size_t k = 0; k < p->passed.size(); ++k) {
          report_variant_step("timer", p->mc->c, p->passed[k]->name);
          u.timers.push_back(reporting_steps_of(build_timer(*p, k, cache, timer, flusher, stream), p->mc->c,
                                                p->passed[k]->name));
          progress.advance(++built, planned, case_label(p->mc->c));
        }
        units.push_back(std::move(u));
      }
  }
  return units;
}

// What the stopping rule did: its settings, and per unit its visits and whether it settled
// (every variant's per-visit medians within the target) or stopped at the cap.
nlohmann::json stopping_rule_json(const std::vector<Unit>& units, const StoppingRule& rule) {
  nlohmann::json per_unit = nlohmann::json::array();
  int settled = 0;
  for (const Unit& u : units) {
    std::set<int> visits;
    double worst = 0;
    for (std::size_t k = 0; k < u.samples.size(); ++k) {
      visits.insert(u.sample_visits[k].begin(), u.sample_visits[k].end());
      worst = std::max(worst, visit_median_halfwidth(u.samples[k], u.sample_visits[k]));
    }
    const bool ok = worst <= rule.target;
    settled += ok;
    per_unit.push_back({{"case", case_label(u.c)}, {"cache", u.cache}, {"timer", u.timer},
                        {"visits", visits.size()}, {"worst_halfwidth", std::isfinite(worst) ? nlohmann::json(worst) : nullptr},
                        {"settled", ok}});
  }
  return {{"target", rule.target}, {"max_visits", rule.max_visits}, {"min_seconds", rule.min_seconds},
          {"units", units.size()}, {"settled", settled}, {"per_unit", per_unit}};
}

}  // namespace

Result run_experiment(const Experiment& e, const std::vector<std::string>& argv) {
  const auto started = std::chrono::steady_clock::now();
  const std::filesystem::path root = source_root();
  require_tree_matches_binary(root);  // before any GPU work: the result names the tree's code
  install_interrupt_handlers();
  report_step("start");
  const int dev = select_device(e.how.device);
  Result result;
  result.experiment = e.name;
  result.meta = provenance(root);
  result.meta["argv"] = argv;
  result.meta["started"] = utc_now();
  result.meta["seed"] = e.how.seed;
  result.meta["settings"] = e.settings;
  for (const auto& [key, block] : e.meta.items()) result.meta[key] = block;
  result.device = device_block(dev);
  const std::string gpu_id = result.device.value("uuid", std::to_string(dev));
  const nlohmann::json load_before = query_gpu_load(gpu_id);

  Stream own_stream;
  const cudaStream_t stream = e.stream.value_or(static_cast<cudaStream_t>(own_stream));
  const L2Flusher flusher(result.device.at("l2_bytes").get<std::size_t>());
  nlohmann::json failures = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& mc : e.cases)
    for (const auto& sk : mc.skipped) skipped.push_back(case_label(mc.c) + " " + sk);
  const auto floors_now = [&] {
    return measure_timer_floors(e.how.caches, e.how.timers, e.how.visits * e.how.samples, kMaxGraphLaunches,
                                flusher, stream);
  };
  // The per-launch floor can change at one check during preparation and then hold for the
  // rest of the process (0.51 against 0.68 us in graph replay on the H200, methodology.md §4),
  // so it is also taken before anything is prepared, on a warm GPU so that the clock is not
  // what differs.
  report_step("warm-up");
  warm_up_gpu(stream);
  report_step("timer floors");
  const nlohmann::json floors_start = floors_now();
  PreparationSplit split;
  auto prepared = prepare_all(e, stream, failures, split);
  const auto timers_began = std::chrono::steady_clock::now();
  std::vector<Unit> units = build_units(e, prepared, flusher, stream);
  if (e.build_units)
    for (Unit& u : e.build_units(stream, flusher)) units.push_back(std::move(u));
  // Every visit also times an empty kernel in its unit's cache mode and timer, so that each
  // records the floor it was measured over; one such timer per mode serves all its units.
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Timer>> floor_timers;
  report_step("floor timers");
  for (Unit& u : units) {
    auto& t = floor_timers[{u.cache, u.timer}];
    if (!t) t = reporting_steps_of(make_floor_timer(u.cache, u.timer, kMaxGraphLaunches, flusher, stream), u.c, "");
    u.floor = t.get();
  }
  split.timers = seconds_since(timers_began);

  report_step("warm-up");
  const WarmupResult warm = warm_up_gpu(stream);
  result.warmup = to_json(warm);
  spdlog::info("warm-up: {:.0f} ms, SM clock {:.0f} MHz{}", warm.ms, warm.sm_clock_mhz,
               warm.steady ? "" : " (not steady)");
  report_step("timer floors");
  const nlohmann::json floors_before = floors_now();
  std::vector<std::string> floor_moves = floor_shifts(floors_start, floors_before, kFloorTolerance, "preparation");
  for (const auto& line : floor_moves) spdlog::warn("{}", line);
  // Everything before this (preparing and checking every case, building the timers, warm-up)
  // is host-bound; the visits are the GPU's. The two split a run's wall time.
  result.meta["visits_started"] = utc_now();
  const double preparation_s = seconds_since(started);
  const auto visits_began = std::chrono::steady_clock::now();

  VisitClock visit_clock(stream);
  ClockFilter clock{[&visit_clock] { return visit_clock.read_mhz(); }, e.how.clock_floor * warm.sm_clock_mhz};
  const std::size_t planned = static_cast<std::size_t>(e.how.visits) * units.size();
  // Where the GPU's part begins (the timer floors before it take seconds at thousands of visits).
  spdlog::info("timing begins: {} visits ({} units x {})", planned, units.size(), e.how.visits);
  PhaseProgress visits_progress(stderr_progress(), "timing", planned, "visits");
  const VisitProgress show_progress = [&visits_progress](std::size_t done, std::size_t total, const Unit& u) {
    visits_progress.advance(done, total, case_label(u.c) + " " + u.cache + " " + u.timer);
  };
  const std::size_t visits_done = time_units(units, e.how.visits, e.how.samples, e.how.seed, show_progress,
                                             e.how.clock_floor > 0 ? &clock : nullptr, [] { return interrupt_signal() != 0; },
                                             e.how.until.target > 0 ? &e.how.until : nullptr);
  visits_progress.finish();
  if (e.how.until.target > 0) result.extra["stopping_rule"] = stopping_rule_json(units, e.how.until);
  report_step("own timing");
  if (e.time_own && !interrupt_signal()) e.time_own(stream, result);
  if (const int sig = interrupt_signal()) {
    result.meta["incomplete"] = {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}, {"visits_done", visits_done},
                                 {"visits_planned", planned}, {"own_timing_skipped", static_cast<bool>(e.time_own)}};
    spdlog::warn("{} after {} of {} visits: the result is written with what was measured, marked incomplete",
                 sig == SIGTERM ? "SIGTERM" : "SIGINT", visits_done, planned);
  }
  const double timing_s = seconds_since(visits_began);
  report_step("record");
  const nlohmann::json floors = floors_now();
  for (const auto& line : floor_shifts(floors_before, floors, kFloorTolerance, "the visits")) {
    spdlog::warn("{}", line);
    floor_moves.push_back(line);
  }
  result.warmup["sm_clock_mhz_after"] = measure_sm_clock_mhz(stream);

  for (const Unit& u : units)
    for (Record& r : unit_records(u)) result.records.push_back(std::move(r));
  result.extra["clock_filter"] = clock_filter_json(units, e.how.clock_floor, warm.sm_clock_mhz, clock.attempts);
  std::map<std::string, std::vector<std::string>> op_sources;
  for (const auto& mc : e.cases) op_sources[mc.c.op] = mc.problem->sources;
  for (const Record& r : result.records) {  // time_own's: the sources it names for the op, if any
    const auto own = e.own_op_sources.find(r.op);
    op_sources.try_emplace(r.op, own == e.own_op_sources.end() ? std::vector<std::string>{} : own->second);
  }
  result.manifest = manifest_block(op_sources, e.sources);
  const nlohmann::json load_after = query_gpu_load(gpu_id);
  result.load = {{"before", load_before},
                 {"after", load_after},
                 {"warnings", load_warnings(load_before, load_after, static_cast<int>(getpid()))}};
  for (const auto& w : result.load["warnings"]) spdlog::warn("{}", w.get<std::string>());
  result.extra.update(nlohmann::json{{"timer_floor", floors},         {"timer_floor_before", floors_before},
                  {"timer_floor_start", floors_start}, {"timer_floor_shifts", floor_moves},
                  {"visit_floors", visit_floors_json(units)},
                  {"check_failures", failures},    {"skipped", skipped}});
  if (e.analyse) e.analyse(result);
  result.meta["seconds"] = {{"preparation", preparation_s}, {"timing", timing_s}, {"total", seconds_since(started)}};
  const double named = split.cases.generate + split.cases.upload + split.cases.oracle + split.checks + split.timers;
  spdlog::info("{:.1f} s preparing and checking (generate {:.1f}, upload {:.1f}, oracle {:.1f}, checks {:.1f}, "
               "timers {:.1f}, other {:.1f}), {:.1f} s timing",
               preparation_s, split.cases.generate, split.cases.upload, split.cases.oracle, split.checks, split.timers,
               preparation_s - named, timing_s);
  result.meta["finished"] = utc_now();
  return result;
}

bool check_experiment(const Experiment& e, const std::function<void(const std::string&)>& line) {
  select_device(e.how.device);
  Stream stream;
  bool all = true;
  PhaseProgress progress(stderr_progress(), "checking", e.cases.size(), "cases");
  for (std::size_t i = 0; i < e.cases.size(); ++i) {
    const MeasuredCase& mc = e.cases[i];
    Rng rng = case_rng(e.how.seed, mc.plan_index.value_or(i));
    const PreparedCase pc = prepare_case(*mc.problem, mc.c, rng, {}, mc.check_rows);
    for (const Launchable* v : mc.variants) {
      const CheckInfo info = check_variant(pc, *v, stream);
      all = all && info.passed;
      char buf[160];
      std::snprintf(buf, sizeof buf, "%-4s %-48s %-14s max_err %.3g (allowed %.3g)", info.passed ? "ok" : "FAIL",
                    case_label(mc.c).c_str(), v->name.c_str(), info.max_err, info.tolerance);
      line(std::string(buf) + (info.passed ? "" : ": " + info.detail));
    }
    for (const auto& skip : mc.skipped) line("skip " + case_label(mc.c) + " " + skip);
    progress.advance(i + 1, e.cases.size(), case_label(mc.c));
  }
  return all;
}

}  // namespace kbench
