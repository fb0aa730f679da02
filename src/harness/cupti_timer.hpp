// The third timer, `cupti`: kernel time as the GPU recorded it. CUPTI's activity records give
// the start and end timestamps of every kernel, memcpy and memset; a sample is one launch of the
// variant, and its time runs from the start of the first piece of GPU work that launch issued
// to the end of its last (the gaps between a multi-kernel variant's kernels included, the
// launch's own overhead before its first kernel not). An event pair around one launch reads
// about 2.1 us more on an H200 (an empty kernel: 0.58 us by CUPTI, 2.69 us by events), which
// is why bandwidth claims for small kernels come from this timer.
//
// Each sample: the stream is held by a host-released blocking kernel (harness/host_gate.hpp),
// the L2 flush (cold) and the launch are queued behind it under an external correlation id,
// the gate is released, and after the stream drains the records carrying that id are read.
// Activity collection is enabled only for the duration of one sample, so that the other
// timers of the same run time kernels without CUPTI's instrumentation.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "harness/timers.hpp"

namespace kbench {

// One piece of GPU work from an activity record, with the correlation id of the API call that
// issued it.
struct GpuSpan {
  std::uint32_t correlation = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
};

// Microseconds from the earliest start to the latest end of the spans whose correlation id
// maps to `sample` in `external` (correlation id -> external id); negative when none does.
// Pure, so that the CPU tests pin it.
double sample_span_us(const std::vector<GpuSpan>& spans,
                      const std::vector<std::pair<std::uint32_t, std::uint64_t>>& external,
                      std::uint64_t sample);

// flusher == nullptr: warm. Throws std::runtime_error when CUPTI cannot be used here (another
// profiler holds it, or the library is missing), naming the reason.
std::unique_ptr<Timer> make_cupti_timer(SetLauncher launch, const DeviceSet& set, const L2Flusher* flusher,
                                        cudaStream_t stream);

}  // namespace kbench
