// A CUDA event pair: the interval between two points of a stream, as the GPU saw it. Shared by
// the timers (harness/timers.cpp) and the host gate (harness/host_gate.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include "core/errors.hpp"

namespace kbench {

class EventPair {
 public:
  EventPair() {
    KB_CUDA(cudaEventCreate(&start_));
    KB_CUDA(cudaEventCreate(&stop_));
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  void start(cudaStream_t s) { KB_CUDA(cudaEventRecord(start_, s)); }
  void stop(cudaStream_t s) { KB_CUDA(cudaEventRecord(stop_, s)); }
  // Waits for the stop event; microseconds from start to stop.
  double elapsed_us() {
    KB_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    KB_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return 1000.0 * ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

}  // namespace kbench
