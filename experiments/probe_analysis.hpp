// The analysis of `kbench probe`, free of any GPU call so that the CPU tests feed it made-up
// series. A series is what one pause gave: the fixed kernel sampled again and again from the
// end of the pause for a window, with busy load between samples (the warm-up's own), each
// sample carrying its time, the SM clock the kernel measured of itself and NVML's reading.
//
// Steady state is the median over the second half of every series' window, by then warm
// whatever the pause. Per pause the analysis gives the first sample's slowdown against it and
// how long the samples took to settle within a tolerance of it; the warm-up a run needs is the
// longest settling time seen.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kbench {

struct ProbeSample {
  double since_ms = 0;  // from the start of the first sample after the pause (%globaltimer)
  double us = 0;        // the sample: event pair around one launch
  double sm_mhz = 0;    // clock64 cycles over %globaltimer ns inside the kernel
  std::optional<double> nvml_mhz;  // NVML's SM clock right after the sample, when NVML answers
};

struct ProbeSeries {
  double pause_s = 0;
  int repetition = 0;  // 0-based: the how-manyth series after this pause
  int position = 0;    // 0-based place in the run's shuffled order
  std::vector<ProbeSample> samples;
};

// Pauses above this (an hour) are a typo, not a probe (and 1e300 s is past what sleep_for takes).
inline constexpr double kMaxPauseS = 3600;

// Pauses must be given from 0 to kMaxPauseS and in increasing order; throws UsageError (one
// line) naming the first that is not.
void require_sorted_pauses(const std::vector<double>& pauses_s);

// When a series settled within `tolerance` (a share) of `steady`, in ms since the pause: the
// time of the first sample from which every later one lies within it, a lone sample outside
// with neighbours inside excepted (an interrupt or a burst of outside load, not the clock,
// which moves for many samples at once). The first sample never counts as lone. nullopt when
// the last sample is outside. `value` picks the quantity (time or clock).
std::optional<double> settle_ms(const ProbeSeries& s, double steady, double tolerance,
                                double (*value)(const ProbeSample&));

// extra.probe.analysis: {"tolerance", "steady_us", "steady_sm_mhz", "pauses": [{"pause_s",
// "repetitions", "first_us" (median over repetitions), "first_us_max", "first_slowdown"
// (first_us / steady_us), "first_sm_mhz", "first_nvml_mhz", "settle_ms" (the longest over the
// repetitions; null if one never settled), "clock_settle_ms", "share_within" (of all its
// samples)}], "warmup_needed_ms" (the longest settle_ms; null if a series never settled),
// "statement" (one sentence)}. `kbench_warmup_min_ms` is kbench's warm-up minimum, for the
// statement.
nlohmann::json analyse_probe(const std::vector<ProbeSeries>& series, double tolerance,
                             double kbench_warmup_min_ms);

// extra.probe.series as written, and back (the analysis of a saved result re-reads it).
nlohmann::json series_to_json(const ProbeSeries& s);
ProbeSeries series_from_json(const nlohmann::json& j);

}  // namespace kbench
