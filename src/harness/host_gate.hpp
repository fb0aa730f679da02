// A host-released blocking kernel, as NVBench's: one thread spins on a flag in pinned host
// memory until the host sets it. Work queued behind it starts only when the host says so, after
// everything has been enqueued, so no host latency (after an idle pause the first launches took
// 180-230 us of host time in the predecessor's measurement) can fall inside a timed interval.
// The events and cupti timers and the probe queue their samples behind it.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

#include "harness/event_pair.hpp"

namespace kbench {

class HostGate {
 public:
  HostGate();
  ~HostGate();
  HostGate(const HostGate&) = delete;
  HostGate& operator=(const HostGate&) = delete;

  // Queues the blocking kernel on `s`. It gives up by itself after `timeout_ms`, so a host that
  // never releases cannot hang the GPU; released_in_time() then says so.
  void hold(cudaStream_t s, double timeout_ms = 1000);
  void release();
  // After the stream has passed the gate: whether the host released it before its timeout.
  bool released_in_time() const;

  // One sample: the gate, an event pair around `launch`, then the release; waits for the stop
  // event and returns the microseconds between the events. Throws std::runtime_error when the
  // gate timed out (the host took longer than a second to enqueue: the sample would hold it).
  double time_us(cudaStream_t s, const std::function<void(cudaStream_t)>& launch);

 private:
  volatile int* flag_ = nullptr;       // host writes 1 to release
  volatile int* timed_out_ = nullptr;  // the kernel writes 1 when it gave up
  EventPair events_;
};

// The gate the timers share: a run builds one timer per case, variant, cache mode and timer
// (thousands in a grid) and each would otherwise pin host memory of its own. Created on first
// use, on the current device; never freed (it lives until the process ends, past the CUDA
// context's teardown). Timers sample one at a time, so one gate serves them all.
HostGate& shared_host_gate();

}  // namespace kbench
