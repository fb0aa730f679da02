#include "harness/host_gate.hpp"

#include <cstdint>
#include <stdexcept>

#include "core/errors.hpp"

namespace kbench {
namespace {

__global__ void host_gate_kernel(const volatile int* flag, volatile int* timed_out, std::uint64_t timeout_ns) {
  std::uint64_t t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (*flag == 0) {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

template <class T>
T* device_view(volatile int* host) {
  void* device = nullptr;
  KB_CUDA(cudaHostGetDevicePointer(&device, const_cast<int*>(host), 0));
  return static_cast<T*>(device);
}

}  // namespace

HostGate::HostGate() {
  void* p = nullptr;
  // Pinned and mapped: the kernel reads the flag through the mapping, volatile so that every
  // read crosses the bus and sees the host's write.
  KB_CUDA(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
  flag_ = static_cast<volatile int*>(p);
  timed_out_ = flag_ + 1;
  flag_[0] = 1;
  timed_out_[0] = 0;
}

HostGate::~HostGate() { cudaFreeHost(const_cast<int*>(flag_)); }

void HostGate::hold(cudaStream_t s, double timeout_ms) {
  flag_[0] = 0;
  timed_out_[0] = 0;
  host_gate_kernel<<<1, 1, 0, s>>>(device_view<const volatile int>(flag_), device_view<volatile int>(timed_out_),
                                   static_cast<std::uint64_t>(timeout_ms * 1e6));
  KB_CUDA_LAUNCH();
}

void HostGate::release() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  flag_[0] = 1;
}

HostGate& shared_host_gate() {
  static HostGate* const gate = new HostGate();
  return *gate;
}

bool HostGate::released_in_time() const { return timed_out_[0] == 0; }

double HostGate::time_us(cudaStream_t s, const std::function<void(cudaStream_t)>& launch) {
  hold(s);
  try {
    events_.start(s);
    launch(s);
    events_.stop(s);
  } catch (...) {
    release();  // rather than leave the stream held until the timeout
    throw;
  }
  release();
  const double us = events_.elapsed_us();
  if (!released_in_time())
    throw std::runtime_error("the host gate timed out: enqueueing one sample took over a second");
  return us;
}

}  // namespace kbench
