// `kbench probe`: how the GPU's clocks behave after idle. A fixed kernel (device/clock.hpp's
// clock probe: fixed FMA work, so its time follows the SM clock) is timed with an event pair
// behind a host-released blocking kernel (harness/host_gate.hpp), so no host latency enters a
// sample, after pauses of idle GPU: each pause `repeats` times, the (pause, repetition) pairs in
// an order shuffled from the seed (harness/schedule.hpp). After a pause the kernel is sampled
// for `window_ms`, `load_ms` of the warm-up's busy kernel between samples, so the series shows
// what a warm-up of that long does. Every sample carries the SM clock the kernel measured of
// itself (clock64 over %globaltimer) and NVML's SM clock read right after it.
//
// It runs on the shared runner (harness/runner.hpp) with no cases, through Experiment::time_own:
// the runner records the device, load, warm-up and manifest, the probe adds its records (per
// pause, every sample and the first samples) and extra.probe (settings, every series with its
// clocks, and the analysis of experiments/probe_analysis.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "harness/runner.hpp"

namespace kbench {

struct ProbeSettings {
  std::vector<double> pauses_s{0, 0.1, 0.5, 1, 2, 5, 10, 20};
  int repeats = 3;
  double window_ms = 1000;  // how long each pause's series samples
  double load_ms = 10;      // busy load between samples (0: back to back)
  int iterations = 2500;    // FMA rounds of the fixed kernel: about 10 us at the H200's 1980 MHz
  double tolerance = 0.02;  // settled: within this share of steady
  std::uint64_t seed = 1;
  int device = 0;
};

// A pause, window or load longer than an hour is a typo, not a probe.
inline constexpr double kMaxProbeMs = 3600.0 * 1000;

// Throws UsageError (one line) on bad settings: pauses negative, unsorted, missing or over an
// hour, repeats, window or iterations not positive, load negative, window or load over an hour.
void validate_probe_settings(const ProbeSettings& s);

Experiment probe_experiment(const ProbeSettings& s);

// Re-runs the analysis over a result's extra.probe.series (what `analyse` computed at the end
// of the run): for tests and for a changed tolerance.
nlohmann::json analyse_probe_result(const Result& r, double tolerance);

}  // namespace kbench
