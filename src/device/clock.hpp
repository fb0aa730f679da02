// The SM clock as the kernels see it, measured in a kernel (as NVBench does) rather than
// asked of nvidia-smi: that needs no NVML or root and reads the clock the SMs actually ran at,
// not a sampled report. Also the busy kernel that warms the GPU up to its working clock.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kbench {

// Runs a ~1 ms kernel with one block on every SM of the current device; one thread counts SM
// cycles (clock64) against nanoseconds (%globaltimer) over the same interval. Synchronises
// `s` and returns the clock in MHz. Throws CudaError if the timer does not advance.
double measure_sm_clock_mhz(cudaStream_t s);

// The SM clock read often and cheaply: the same kernel spinning about 20 us (40000 cycles at
// 2 GHz against %globaltimer's 32 ns steps: 0.2% resolution), into a buffer kept between reads.
// The runner reads it before each visit (harness/units.hpp), where a ~1 ms read would cost more
// than most visits.
class VisitClock {
 public:
  explicit VisitClock(cudaStream_t s);
  ~VisitClock();
  VisitClock(const VisitClock&) = delete;
  VisitClock& operator=(const VisitClock&) = delete;
  // Synchronises the stream; MHz. Throws CudaError if the timer does not advance.
  double read_mhz();

 private:
  cudaStream_t stream_;
  int sms_ = 0;
  long long spin_cycles_ = 0;
  void* result_ = nullptr;  // device: cycles, nanoseconds
  void* host_ = nullptr;    // pinned copy of the same
};

// Queues a kernel that keeps every SM's FMA units busy for about `approx_ms` (it stops on
// %globaltimer, so the time holds whatever the clock does). `sms` is the device's SM count;
// the grid fills each SM to full occupancy. Does not synchronise.
void launch_busy(cudaStream_t s, int sms, double approx_ms);

// What the clock probe's kernel saw of itself: SM cycles (clock64) and %globaltimer nanoseconds
// from its first instruction to its last, read by one thread of block 0.
struct ClockStamp {
  std::uint64_t cycles = 0;
  std::uint64_t start_ns = 0;  // %globaltimer at the start: GPU wall time, comparable across launches
  std::uint64_t end_ns = 0;
};

// The fixed kernel of `kbench probe`: one block of kProbeThreads per SM, each thread `iterations`
// rounds of four independent FMA chains. Fixed work, so its time follows the SM clock alone (no
// memory traffic); `stamp` (device memory) gets its own cycles and nanoseconds. Does not
// synchronise.
inline constexpr int kProbeThreads = 256;
void launch_clock_probe(cudaStream_t s, int sms, int iterations, ClockStamp* stamp);

}  // namespace kbench
