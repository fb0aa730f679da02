#include "device/warmup.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "core/errors.hpp"
#include "device/clock.hpp"
#include "device/device_limits.hpp"

namespace kbench {
namespace {

constexpr double kBurstMs = 20;
constexpr std::size_t kSteadyReadings = 3;
constexpr double kSteadyTolerance = 0.01;

bool last_readings_agree(const std::vector<double>& trace) {
  if (trace.size() < kSteadyReadings) return false;
  const auto [lo, hi] = std::minmax_element(trace.end() - kSteadyReadings, trace.end());
  return *hi - *lo <= kSteadyTolerance * *hi;
}

}  // namespace

WarmupResult warm_up_gpu(cudaStream_t s, double min_ms, double max_ms) {
  const int sms = current_device_limits().sms;

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(clock::now() - start).count();
  };
  WarmupResult r;
  while (true) {
    launch_busy(s, sms, kBurstMs);
    r.clock_trace_mhz.push_back(measure_sm_clock_mhz(s));  // synchronises s
    r.ms = elapsed_ms();
    if (r.ms >= min_ms && last_readings_agree(r.clock_trace_mhz)) {
      r.steady = true;
      break;
    }
    if (r.ms >= max_ms) break;
  }
  r.sm_clock_mhz = r.clock_trace_mhz.back();
  if (!r.steady)
    spdlog::warn("SM clock still moving after {:.0f} ms of warm-up (last {:.0f} MHz): timings "
                 "may drift with it",
                 r.ms, r.sm_clock_mhz);
  return r;
}

nlohmann::json to_json(const WarmupResult& r) {
  return {{"ms", r.ms},
          {"sm_clock_mhz", r.sm_clock_mhz},
          {"steady", r.steady},
          {"clock_trace_mhz", r.clock_trace_mhz}};
}

}  // namespace kbench
