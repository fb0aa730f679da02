#include "harness/timer_floor.hpp"

#include <cmath>
#include <cstdio>

#include "core/stats.hpp"
#include "harness/cupti_timer.hpp"
#include "harness/timers.hpp"

namespace kbench {

namespace {

// The set an empty kernel is launched on: no buffers, and alive as long as any timer of it.
const DeviceSet& no_buffers() {
  static const DeviceSet none;
  return none;
}

}  // namespace

std::unique_ptr<Timer> make_floor_timer(const std::string& cache, const std::string& timer, int graph_launches,
                                        const L2Flusher& flusher, cudaStream_t stream) {
  const SetLauncher empty = [](const DeviceSet&, cudaStream_t st) { launch_empty_kernel(st); };
  const bool cold = cache == "cold";
  if (timer == "events") return make_event_timer(empty, no_buffers(), cold ? &flusher : nullptr, stream);
  if (timer == "cupti") return make_cupti_timer(empty, no_buffers(), cold ? &flusher : nullptr, stream);
  return make_graph_timer(empty, {&no_buffers()}, graph_launches, cold, stream);
}

nlohmann::json measure_timer_floors(const std::vector<std::string>& caches,
                                    const std::vector<std::string>& timers, int samples,
                                    int graph_launches, const L2Flusher& flusher,
                                    cudaStream_t stream) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& cache : caches)
    for (const auto& timer : timers) {
      const auto t = make_floor_timer(cache, timer, graph_launches, flusher, stream);
      std::vector<double> us;
      for (int i = 0; i < samples; ++i) us.push_back(t->sample_us());
      const Summary sum = summarize(us);
      out.push_back({{"cache", cache}, {"timer", timer}, {"median_us", sum.median},
                     {"min_us", sum.min}, {"samples_us", us}});
    }
  return out;
}

std::vector<std::string> floor_shifts(const nlohmann::json& before, const nlohmann::json& after,
                                      double tolerance, const std::string& during) {
  std::vector<std::string> lines;
  if (!before.is_array() || !after.is_array()) return lines;
  for (const auto& b : before)
    for (const auto& a : after) {
      if (a.value("cache", "") != b.value("cache", "") || a.value("timer", "") != b.value("timer", ""))
        continue;
      const double was = b.value("median_us", NAN), now = a.value("median_us", NAN);
      if (!(was > 0) || !std::isfinite(now) || std::abs(now - was) <= tolerance * was) continue;
      char line[240];
      std::snprintf(line, sizeof line,
                    "timer floor moved during %s: %s %s %.3f -> %.3f us per launch (%+.0f%%)",
                    during.c_str(), b.value("cache", "").c_str(), b.value("timer", "").c_str(), was,
                    now, 100.0 * (now - was) / was);
      lines.emplace_back(line);
    }
  return lines;
}

}  // namespace kbench
