#include "harness/timers.hpp"

#include <stdexcept>

#include "core/errors.hpp"
#include "harness/event_pair.hpp"
#include "harness/host_gate.hpp"

namespace kbench {

namespace {

class EventTimer final : public GatedLaunchTimer {
 public:
  using GatedLaunchTimer::GatedLaunchTimer;
  double sample_us() override {
    prime_once();
    KB_CUDA(cudaStreamSynchronize(stream_));
    // The flush (cold), the start event, the launch and the stop event are queued behind the
    // host-released gate and run only once all of them are queued: host enqueue latency, however
    // long, stays out of the interval.
    HostGate& gate = shared_host_gate();
    gate.hold(stream_);
    try {
      if (flusher_) flusher_->flush(stream_);
      events_.start(stream_);
      launch_(set_, stream_);
      events_.stop(stream_);
    } catch (...) {
      gate.release();
      throw;
    }
    gate.release();
    const double us = events_.elapsed_us();
    if (!gate.released_in_time())
      throw std::runtime_error("events timer: the host gate timed out (enqueueing one sample took over a second)");
    return us;
  }
  std::string note() const override {
    return std::string(flusher_ ? "one launch after an L2 flush" : "one launch, L2 warm") +
           ", queued behind a host-released gate; host launch latency hidden, GPU-side launch cost included";
  }

 private:
  EventPair events_;
};

class GraphTimer final : public Timer {
 public:
  GraphTimer(const SetLauncher& launch, const std::vector<const DeviceSet*>& sets, int count,
             bool cold, cudaStream_t s, cudaStreamCaptureMode mode)
      : count_(count), sets_(sets.size()), cold_(cold), stream_(s) {
    KB_CUDA(cudaStreamBeginCapture(stream_, mode));
    try {
      for (int i = 0; i < count_; ++i) launch(*sets[static_cast<std::size_t>(i) % sets.size()], stream_);
    } catch (...) {
      cudaGraph_t broken{};
      cudaStreamEndCapture(stream_, &broken);
      if (broken) cudaGraphDestroy(broken);
      throw;
    }
    KB_CUDA(cudaStreamEndCapture(stream_, &graph_));
    KB_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
    // First replay uploads the graph to the device: keep it out of the samples.
    KB_CUDA(cudaGraphLaunch(exec_, stream_));
    KB_CUDA(cudaStreamSynchronize(stream_));
  }
  ~GraphTimer() override {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  double sample_us() override {
    KB_CUDA(cudaStreamSynchronize(stream_));
    events_.start(stream_);
    KB_CUDA(cudaGraphLaunch(exec_, stream_));
    events_.stop(stream_);
    return events_.elapsed_us() / count_;
  }
  int launches_per_sample() const override { return count_; }
  void prime() override {  // one replay: the graph's launches, untimed
    KB_CUDA(cudaGraphLaunch(exec_, stream_));
    KB_CUDA(cudaStreamSynchronize(stream_));
  }
  std::string note() const override {
    return std::to_string(count_) + " launches replayed from one CUDA graph, time per launch; " +
           (!cold_ ? std::string("same buffers (warm)")
            : sets_ > 1 ? "consecutive launches rotate through " + std::to_string(sets_) +
                              " input sets totalling >= 3x L2 (cold)"
                        : std::string("each launch streams >= 3x L2 (cold)")) +
           "; excludes host launch overhead";
  }

 private:
  int count_;
  std::size_t sets_;
  bool cold_;
  cudaStream_t stream_;
  cudaGraph_t graph_{};
  cudaGraphExec_t exec_{};
  EventPair events_;
};

}  // namespace

void GatedLaunchTimer::prime() {
  if (flusher_) flusher_->flush(stream_);
  launch_(set_, stream_);
  KB_CUDA(cudaStreamSynchronize(stream_));
  primed_ = true;
}

std::unique_ptr<Timer> make_event_timer(SetLauncher launch, const DeviceSet& set,
                                        const L2Flusher* flusher, cudaStream_t stream) {
  return std::make_unique<EventTimer>(std::move(launch), set, flusher, stream);
}

std::unique_ptr<Timer> make_graph_timer(SetLauncher launch, std::vector<const DeviceSet*> sets,
                                        int count, bool cold, cudaStream_t stream,
                                        cudaStreamCaptureMode mode) {
  return std::make_unique<GraphTimer>(launch, sets, count, cold, stream, mode);
}

double estimate_launch_us(const SetLauncher& launch, const DeviceSet& set, cudaStream_t stream) {
  constexpr int kLaunches = 5;
  launch(set, stream);  // first launch may load modules
  EventPair ev;
  KB_CUDA(cudaStreamSynchronize(stream));
  ev.start(stream);
  for (int i = 0; i < kLaunches; ++i) launch(set, stream);
  ev.stop(stream);
  return ev.elapsed_us() / kLaunches;
}

}  // namespace kbench
