#include "experiments/probe.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "core/device_buffer.hpp"
#include "core/errors.hpp"
#include "core/stats.hpp"
#include "device/clock.hpp"
#include "device/device_limits.hpp"
#include "device/nvml_clock.hpp"
#include "device/warmup.hpp"
#include "experiments/probe_analysis.hpp"
#include "harness/host_gate.hpp"
#include "harness/schedule.hpp"

namespace kbench {
namespace {

using nlohmann::json;

// A sample takes at least this long (the gate, two events, a launch and a synchronisation), so
// the window can hold no more samples than window / max(load, this).
constexpr double kLeastSampleMs = 0.02;
constexpr std::size_t kMaxSamplesPerSeries = 100000;

std::string pause_name(double pause_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "after_%gs", pause_s);
  return buf;
}

struct Sampler {
  const ProbeSettings& p;
  cudaStream_t stream;
  int sms;
  HostGate gate;
  NvmlClock nvml;
  std::size_t capacity;
  DeviceBuffer stamps;

  Sampler(const ProbeSettings& settings, cudaStream_t s, const std::string& uuid)
      : p(settings),
        stream(s),
        sms(current_device_limits().sms),
        nvml(uuid),
        capacity(std::min(kMaxSamplesPerSeries,
                          static_cast<std::size_t>(p.window_ms / std::max(p.load_ms, kLeastSampleMs)) + 2)),
        stamps(capacity * sizeof(ClockStamp)) {}

  ProbeSeries series_after(double pause_s) {
    KB_CUDA(cudaStreamSynchronize(stream));
    std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
    auto* stamp = static_cast<ClockStamp*>(stamps.get());
    std::vector<double> us;
    std::vector<std::optional<double>> nvml_mhz;
    const auto began = std::chrono::steady_clock::now();
    const auto elapsed_ms = [&] {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    };
    for (std::size_t k = 0; k < capacity; ++k) {
      us.push_back(gate.time_us(stream, [&](cudaStream_t s) { launch_clock_probe(s, sms, p.iterations, stamp + k); }));
      nvml_mhz.push_back(nvml.sm_mhz());
      if (elapsed_ms() >= p.window_ms) break;
      if (p.load_ms > 0) launch_busy(stream, sms, p.load_ms);
    }
    std::vector<ClockStamp> host(us.size());
    KB_CUDA(cudaMemcpyAsync(host.data(), stamp, host.size() * sizeof(ClockStamp), cudaMemcpyDeviceToHost, stream));
    KB_CUDA(cudaStreamSynchronize(stream));
    ProbeSeries out;
    out.pause_s = pause_s;
    for (std::size_t k = 0; k < us.size(); ++k) {
      const double ns = static_cast<double>(host[k].end_ns - host[k].start_ns);
      const double since_ms = static_cast<double>(host[k].start_ns - host[0].start_ns) / 1e6;
      out.samples.push_back({since_ms, us[k], ns > 0 ? static_cast<double>(host[k].cycles) / ns * 1000 : NAN,
                             nvml_mhz[k]});
    }
    return out;
  }
};

Record base_record(const ProbeSettings& p, int sms, const std::string& variant) {
  Record r;
  r.op = "clock_probe";
  r.variant = variant;
  r.dtype = "float32";
  r.shape = {sms, kProbeThreads, p.iterations};
  r.cache = "warm";
  r.timer = "events";
  r.timer_note = "one launch behind a host-released blocking kernel; host launch latency hidden, GPU-side "
                 "launch cost included";
  r.flops = 8.0 * sms * kProbeThreads * p.iterations;  // four FMA chains, two flops each
  r.check = {true, 0, 0, "no output to check: a fixed-work clock kernel"};
  return r;
}

void finish(Record& r) {
  const Summary s = summarize(r.samples_us);
  r.median_us = s.median;
  r.q1_us = s.q1;
  r.q3_us = s.q3;
  r.min_us = s.min;
  r.tflops = r.flops / (r.median_us * 1e6);
}

// Per pause: every sample of every repetition ("after_<P>s"; sample_visits = the repetition),
// and the first sample of each repetition ("after_<P>s_first").
std::vector<Record> probe_records(const ProbeSettings& p, int sms, const std::vector<ProbeSeries>& series) {
  std::vector<Record> out;
  for (double pause : p.pauses_s) {
    Record all = base_record(p, sms, pause_name(pause));
    Record first = base_record(p, sms, pause_name(pause) + "_first");
    for (int rep = 0; rep < p.repeats; ++rep)
      for (const auto& s : series)
        if (s.pause_s == pause && s.repetition == rep && !s.samples.empty()) {
          for (const auto& x : s.samples) {
            all.samples_us.push_back(x.us);
            all.sample_visits.push_back(rep);
          }
          first.samples_us.push_back(s.samples.front().us);
          first.sample_visits.push_back(rep);
        }
    if (all.samples_us.empty()) continue;
    finish(all);
    finish(first);
    out.push_back(std::move(all));
    out.push_back(std::move(first));
  }
  return out;
}

json settings_json(const ProbeSettings& s) {
  return {{"pauses_s", s.pauses_s}, {"repeats", s.repeats},       {"window_ms", s.window_ms},
          {"load_ms", s.load_ms},   {"iterations", s.iterations}, {"tolerance", s.tolerance},
          {"device", s.device}};
}

}  // namespace

void validate_probe_settings(const ProbeSettings& s) {
  require_sorted_pauses(s.pauses_s);
  if (s.repeats < 1) throw UsageError("--repeats must be at least 1");
  // An hour bounds both: 1e300 ms is a typo, and past double -> size_t and chrono's range.
  if (!(s.window_ms > 0 && s.window_ms <= kMaxProbeMs)) throw UsageError("--window-ms must be positive, at most 3600000 (an hour)");
  if (!(s.load_ms >= 0 && s.load_ms <= kMaxProbeMs)) throw UsageError("--load-ms must lie from 0 to 3600000 (an hour)");
  if (s.iterations < 1) throw UsageError("--iterations must be at least 1");
  if (!(s.tolerance > 0 && s.tolerance < 1)) throw UsageError("--tolerance must lie between 0 and 1");
}

Experiment probe_experiment(const ProbeSettings& s) {
  validate_probe_settings(s);
  Experiment e;
  e.name = "probe";
  e.sources = {"experiments/probe"};  // probe.* and probe_analysis.*
  e.settings = settings_json(s);
  // No cases, so no visits; the floors the runner takes around them use these.
  e.how = Measurement{{"warm"}, {"events"}, 1, 10, s.seed, s.device};
  e.time_own = [s](cudaStream_t stream, Result& r) {
    Sampler sampler(s, stream, r.device.value("uuid", std::string()));
    if (!sampler.nvml.unavailable().empty()) spdlog::warn("no NVML clock readings: {}", sampler.nvml.unavailable());
    // One "unit" per pause, visited `repeats` times: the schedule's shuffle gives the order.
    const std::vector<Visit> order = visit_order(std::vector<std::size_t>(s.pauses_s.size(), 1), s.repeats, s.seed);
    std::vector<ProbeSeries> series;
    for (std::size_t i = 0; i < order.size(); ++i) {
      ProbeSeries one = sampler.series_after(s.pauses_s[order[i].unit]);
      one.repetition = order[i].number;
      one.position = static_cast<int>(i);
      spdlog::info("[{}/{}] after {:g} s: first sample {:.2f} us at {:.0f} MHz, {} samples", i + 1, order.size(),
                   one.pause_s, one.samples.front().us, one.samples.front().sm_mhz, one.samples.size());
      series.push_back(std::move(one));
    }
    for (Record& rec : probe_records(s, sampler.sms, series)) r.records.push_back(std::move(rec));
    json list = json::array();
    for (const auto& one : series) list.push_back(series_to_json(one));
    r.extra["probe"] = {{"nvml", sampler.nvml.unavailable().empty() ? "read after every sample"
                                                                     : sampler.nvml.unavailable()},
                        {"series", list}};
  };
  const double tolerance = s.tolerance;
  e.analyse = [tolerance](Result& r) { r.extra["probe"]["analysis"] = analyse_probe_result(r, tolerance); };
  return e;
}

json analyse_probe_result(const Result& r, double tolerance) {
  std::vector<ProbeSeries> series;
  const auto probe = r.extra.find("probe");
  if (probe != r.extra.end() && probe->contains("series"))
    for (const auto& j : probe->at("series")) series.push_back(series_from_json(j));
  return analyse_probe(series, tolerance, kWarmupMinMs);
}

}  // namespace kbench
