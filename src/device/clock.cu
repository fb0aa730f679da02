#include "device/clock.hpp"

#include <cstdint>

#include "core/device_buffer.hpp"
#include "core/errors.hpp"
#include "device/device_limits.hpp"

namespace kbench {
namespace {

constexpr int kBusyThreads = 256;
constexpr int kBusyUnroll = 64;  // FMAs per chain between timer reads

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One block per SM so that the whole GPU is active while the clock is read, as under load;
// only block 0 reports.
__global__ void sm_clock_kernel(long long spin_cycles, unsigned long long* cycles_and_ns) {
  const long long c0 = clock64();
  const std::uint64_t t0 = global_timer_ns();
  while (clock64() - c0 < spin_cycles) {
  }
  const long long c1 = clock64();
  const std::uint64_t t1 = global_timer_ns();
  if (blockIdx.x == 0) {
    cycles_and_ns[0] = static_cast<unsigned long long>(c1 - c0);
    cycles_and_ns[1] = t1 - t0;
  }
}

// Written only if the FMA chains reach an impossible value, so that the compiler must keep
// the work but memory traffic never enters it.
__device__ float g_busy_sink;

// Four independent FMA chains per thread keep the pipes full; with a = 1 - b the chains
// converge to 1 and never overflow. a and b are arguments so nothing folds at compile time.
__global__ void busy_fma_kernel(std::uint64_t duration_ns, float a, float b) {
  float x0 = threadIdx.x, x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
  const std::uint64_t t0 = global_timer_ns();
  do {
#pragma unroll
    for (int i = 0; i < kBusyUnroll; ++i) {
      x0 = fmaf(x0, a, b);
      x1 = fmaf(x1, a, b);
      x2 = fmaf(x2, a, b);
      x3 = fmaf(x3, a, b);
    }
  } while (global_timer_ns() - t0 < duration_ns);
  const float sum = x0 + x1 + x2 + x3;
  if (sum == -1.0f) g_busy_sink = sum;
}

// The same chains for a fixed count: the time is cycles over clock. Block 0's first thread stamps
// the interval; every block does the same work, so the grid ends with it give or take a wave.
__global__ void clock_probe_kernel(int iterations, float a, float b, ClockStamp* stamp) {
  const long long c0 = clock64();
  const std::uint64_t t0 = global_timer_ns();
  float x0 = threadIdx.x, x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
  for (int i = 0; i < iterations; ++i) {
    x0 = fmaf(x0, a, b);
    x1 = fmaf(x1, a, b);
    x2 = fmaf(x2, a, b);
    x3 = fmaf(x3, a, b);
  }
  const float sum = x0 + x1 + x2 + x3;
  if (sum == -1.0f) g_busy_sink = sum;
  __syncthreads();  // the stamp closes when the whole block is done, not when thread 0 is
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const long long c1 = clock64();
    stamp->cycles = static_cast<std::uint64_t>(c1 - c0);
    stamp->start_ns = t0;
    stamp->end_ns = global_timer_ns();
  }
}

}  // namespace

double measure_sm_clock_mhz(cudaStream_t s) {
  const int sms = current_device_limits().sms;
  // The rated peak clock in kHz is the number of cycles in 1 ms at that clock.
  const long long spin_cycles = device_attribute(cudaDevAttrClockRate);
  DeviceBuffer result(2 * sizeof(unsigned long long));
  auto* device_result = static_cast<unsigned long long*>(result.get());

  sm_clock_kernel<<<sms, 1, 0, s>>>(spin_cycles, device_result);
  KB_CUDA_LAUNCH();
  unsigned long long cycles_and_ns[2] = {0, 0};
  KB_CUDA(cudaMemcpyAsync(cycles_and_ns, device_result, sizeof cycles_and_ns,
                          cudaMemcpyDeviceToHost, s));
  KB_CUDA(cudaStreamSynchronize(s));
  // NVBench once printed "-nan" clocks when the timer stood still; fail loudly instead.
  if (cycles_and_ns[1] == 0) throw CudaError("%globaltimer did not advance over the clock kernel");
  return static_cast<double>(cycles_and_ns[0]) / static_cast<double>(cycles_and_ns[1]) * 1000.0;
}

VisitClock::VisitClock(cudaStream_t s) : stream_(s), sms_(current_device_limits().sms) {
  constexpr double kSpinMs = 0.02;
  spin_cycles_ = static_cast<long long>(device_attribute(cudaDevAttrClockRate) * kSpinMs);
  KB_CUDA(cudaMalloc(&result_, 2 * sizeof(unsigned long long)));
  KB_CUDA(cudaMallocHost(&host_, 2 * sizeof(unsigned long long)));
}

VisitClock::~VisitClock() {
  cudaFree(result_);
  cudaFreeHost(host_);
}

double VisitClock::read_mhz() {
  sm_clock_kernel<<<sms_, 1, 0, stream_>>>(spin_cycles_, static_cast<unsigned long long*>(result_));
  KB_CUDA_LAUNCH();
  KB_CUDA(cudaMemcpyAsync(host_, result_, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream_));
  KB_CUDA(cudaStreamSynchronize(stream_));
  const auto* cycles_and_ns = static_cast<const unsigned long long*>(host_);
  if (cycles_and_ns[1] == 0) throw CudaError("%globaltimer did not advance over the clock kernel");
  return static_cast<double>(cycles_and_ns[0]) / static_cast<double>(cycles_and_ns[1]) * 1000.0;
}

void launch_busy(cudaStream_t s, int sms, double approx_ms) {
  int blocks_per_sm = 0;
  KB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, busy_fma_kernel,
                                                        kBusyThreads, 0));
  // Every block resident at once, so all of them start together and stop together.
  const int blocks = sms * blocks_per_sm;
  const auto duration_ns = static_cast<std::uint64_t>(approx_ms * 1e6);
  const float b = 1.0f / 1024.0f;
  busy_fma_kernel<<<blocks, kBusyThreads, 0, s>>>(duration_ns, 1.0f - b, b);
  KB_CUDA_LAUNCH();
}

void launch_clock_probe(cudaStream_t s, int sms, int iterations, ClockStamp* stamp) {
  const float b = 1.0f / 1024.0f;
  clock_probe_kernel<<<sms, kProbeThreads, 0, s>>>(iterations, 1.0f - b, b, stamp);
  KB_CUDA_LAUNCH();
}

}  // namespace kbench
