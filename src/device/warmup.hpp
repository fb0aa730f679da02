// Warming the GPU before timing: after idle the SM clock sits low and climbs over tens to
// hundreds of milliseconds of load, so the first samples of a cold GPU would be slow for
// reasons that have nothing to do with the kernel. Run busy work until the clock stops moving.
#pragma once

#include <cuda_runtime_api.h>

#include <nlohmann/json.hpp>

#include <vector>

namespace kbench {

struct WarmupResult {
  double ms = 0;            // wall time spent warming up
  double sm_clock_mhz = 0;  // the last clock reading
  bool steady = false;      // whether the clock settled before max_ms
  std::vector<double> clock_trace_mhz;  // one reading after each busy burst
};

// The least warm-up time, set from `kbench probe` (docs/experiments.md,
// results/probe/probe-20261201T122746Z-84504a.json): on the H200 every series settled within 2%
// after at most 12.1 ms of load, its clocks held up through 20 s of idle. 300 ms is 25 times
// that, kept for GPUs whose clocks do drop (the predecessor's ran 10x slow after 20 s idle, and
// such a clock climbs over tens to hundreds of ms); it costs 0.3 s a run.
inline constexpr double kWarmupMinMs = 300;

// Repeats (~20 ms of FMA work on every SM, then a clock reading) until at least `min_ms` have
// passed and the last three readings lie within 1% of each other, or until `max_ms` (then
// steady = false and a warning is logged). Uses the current device.
WarmupResult warm_up_gpu(cudaStream_t s, double min_ms = kWarmupMinMs, double max_ms = 5000);

// {"ms", "sm_clock_mhz", "steady", "clock_trace_mhz"}
nlohmann::json to_json(const WarmupResult& r);

}  // namespace kbench
