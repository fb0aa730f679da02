// The events and graph timers (the third, cupti, is in harness/cupti_timer.hpp). Each reports
// microseconds per launch.
//
// events: a CUDA event pair around one launch. The pair, the launch and (cold) the L2 flush
//   before them are queued behind a host-released blocking kernel (harness/host_gate.hpp), as in
//   NVBench, and start only once everything is queued: the host's launch latency is hidden, however
//   long it is; the interval still holds the GPU-side cost of starting one kernel, which graph
//   replay amortizes.
// graph: `count` launches captured once into a CUDA graph and replayed; the event interval
//   around a replay divided by `count`. Launch gaps shrink to the graph's, so the difference
//   to the events timer is the launch overhead. Cold mode cannot flush between captured
//   launches, so consecutive launches rotate through input sets totalling >= 3x L2.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>

#include "harness/l2_flush.hpp"
#include "harness/prepare.hpp"

namespace kbench {

// Launches the variant once on one buffer set.
using SetLauncher = std::function<void(const DeviceSet&, cudaStream_t)>;

class Timer {
 public:
  virtual ~Timer() = default;
  virtual double sample_us() = 0;  // one sample: microseconds per launch
  virtual int launches_per_sample() const = 0;
  virtual std::string note() const = 0;  // what the time includes, for the record
  // One untimed launch, at the start of each visit (harness/units.cpp).
  virtual void prime() = 0;
};

// What the events and cupti timers share: one launch of the variant a sample, queued (after an
// L2 flush when cold) behind the host-released gate; prime() launches it once ungated, at the
// start of each visit and before the first sample. Why before the first: a kernel whose module
// is not loaded yet (CUDA loads modules lazily, at first launch) cannot be loaded while the gate
// kernel spins, so the first sample of every timer waited out the gate's timeout on the H200.
class GatedLaunchTimer : public Timer {
 public:
  GatedLaunchTimer(SetLauncher launch, const DeviceSet& set, const L2Flusher* flusher, cudaStream_t s)
      : launch_(std::move(launch)), set_(set), flusher_(flusher), stream_(s) {}
  int launches_per_sample() const override { return 1; }
  void prime() override;

 protected:
  void prime_once() {
    if (!primed_) prime();
  }
  SetLauncher launch_;
  const DeviceSet& set_;
  const L2Flusher* flusher_;  // nullptr: warm
  cudaStream_t stream_;

 private:
  bool primed_ = false;
};

// flusher == nullptr: warm.
std::unique_ptr<Timer> make_event_timer(SetLauncher launch, const DeviceSet& set,
                                        const L2Flusher* flusher, cudaStream_t stream);
// sets: the buffer sets consecutive launches rotate through; cold says whether they were
// chosen to defeat the L2 (rotation, or one set already >= 3x L2) or not (warm). `mode` is the
// stream capture's: thread-local for kernels; relaxed for Python callables (src/python/), whose
// frameworks may allocate (cudaMalloc) or run work from other threads (autograd) while captured.
std::unique_ptr<Timer> make_graph_timer(SetLauncher launch, std::vector<const DeviceSet*> sets,
                                        int count, bool cold, cudaStream_t stream,
                                        cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal);

// Mean microseconds of one launch over a few back-to-back launches (for sizing graphs).
double estimate_launch_us(const SetLauncher& launch, const DeviceSet& set, cudaStream_t stream);

}  // namespace kbench
