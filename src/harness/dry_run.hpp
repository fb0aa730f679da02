// The plan of an experiment without running it (`kbench run --dry-run`): every case in every
// cache mode and timer with the variants that would be timed and those skipped with the reason,
// visits x samples, the timed samples in all, and an estimate of the time. Nothing here touches
// the GPU: the device's limits come in as plain data (device/device_info.hpp plan_device).
//
// The estimate is a model, not a measurement, and says so wherever it is shown:
// - preparation: per case, kPrepNsPerElement for each element of its inputs and outputs, once
//   for the inputs and the FP64 oracle and once more per variant checked;
// - a launch: the op's bytes at kAssumedBytesPerS, at least kLaunchFloorUs;
// - an events sample: the launch, the event pair and the host round trip, plus for cold the L2
//   flush (twice the L2 streamed at the same bandwidth); a graph sample: as many launches as
//   the runner captures (about kGraphTargetUs of them) plus the round trip; each visit also
//   pays one untimed sample per variant (the runner's priming launch);
// - fixed costs: CUDA start-up, two warm-ups of kWarmupMinMs, and the three timer-floor
//   measurements (visits x samples empty launches per cache mode and timer each).
// Its constants were set against one rows.json sweep on the H200 (dry_run.cpp says which).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device/device_limits.hpp"
#include "harness/runner.hpp"

namespace kbench {

// One case in one cache mode and timer, as it would be timed.
struct PlanUnit {
  std::size_t case_index = 0;  // into Experiment::cases
  std::string cache, timer;
  std::int64_t timed_samples = 0;  // variants x visits x samples
  double timing_s = 0;             // estimated
};

struct PlanEstimate {
  std::vector<PlanUnit> units;
  std::int64_t timed_samples = 0;
  double preparation_s = 0;  // preparing and checking every case
  double fixed_s = 0;        // start-up, warm-ups and timer floors
  double timing_s = 0;       // the visits
  double total_s() const { return preparation_s + fixed_s + timing_s; }
};

PlanEstimate estimate_plan(const Experiment& e, const DeviceLimits& dev);

// The plan as text for a terminal, one line per unit and per skip, then the totals, the
// estimate and its model. `limits_source` says where `dev` came from.
std::string describe_plan(const Experiment& e, const DeviceLimits& dev, const std::string& limits_source);

// The plan as data (`kbench run --dry-run --format json`, {"schema": "kbench/plan/v1", ...}): the
// experiment, its cache modes, timers, visits, samples and seed, and every case as it would be
// recorded (op, dtype, shape, every parameter), with the bytes and flops its records count and the
// variants timed and skipped. A program that times kbench's ops its own way reads its cases from
// here, so that its records count what kbench's count (scripts/torch_baseline.py).
nlohmann::json plan_json(const Experiment& e);

}  // namespace kbench
