// Each timer's floor: what it reports for an empty kernel, the least any record of the run can
// read. The sweep takes it before and after its visits: a floor that moves between the two
// means the per-launch cost changed under the run, and a few-microsecond kernel moves with it,
// so the run says so instead of leaving it to a later comparison. (Between processes of the
// same binary the H200 has shown 0.51 against 0.69 us per launch in graph replay; within a run
// it has held so far, so this check is a guard, not a known correction.)
#pragma once

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "harness/l2_flush.hpp"
#include "harness/timers.hpp"

namespace kbench {

// A timer of an empty kernel in one cache mode and timer, timed as that timer times a variant
// (cold: the L2 flushed, or for graph replay nothing to rotate); the graph timer replays
// `graph_launches` empty kernels per sample. It needs no buffers, so it may outlive any case: the
// runner keeps one per cache mode and timer for the floor it takes in every visit
// (harness/units.hpp).
std::unique_ptr<Timer> make_floor_timer(const std::string& cache, const std::string& timer, int graph_launches,
                                        const L2Flusher& flusher, cudaStream_t stream);

// One entry {cache, timer, median_us, min_us, samples_us} per cache mode and timer, from
// `samples` samples each; the graph timer replays `graph_launches` empty kernels per sample.
nlohmann::json measure_timer_floors(const std::vector<std::string>& caches,
                                    const std::vector<std::string>& timers, int samples,
                                    int graph_launches, const L2Flusher& flusher,
                                    cudaStream_t stream);

// One line per cache mode and timer whose median floor differs between `before` and `after`
// by more than `tolerance` (a fraction of the earlier one), naming what came between them
// (`during`: "preparation", "the visits"); entries missing from either side are skipped.
std::vector<std::string> floor_shifts(const nlohmann::json& before, const nlohmann::json& after,
                                      double tolerance, const std::string& during);

}  // namespace kbench
