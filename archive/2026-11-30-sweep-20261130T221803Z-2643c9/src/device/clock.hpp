// The SM clock as the kernels see it, measured in a kernel (as NVBench does) rather than
// asked of nvidia-smi: that needs no NVML or root and reads the clock the SMs actually ran at,
// not a sampled report. Also the busy kernel that warms the GPU up to its working clock.
#pragma once

#include <cuda_runtime_api.h>

namespace kbench {

// Runs a ~1 ms kernel with one block on every SM of the current device; one thread counts SM
// cycles (clock64) against nanoseconds (%globaltimer) over the same interval. Synchronises
// `s` and returns the clock in MHz. Throws CudaError if the timer does not advance.
double measure_sm_clock_mhz(cudaStream_t s);

// Queues a kernel that keeps every SM's FMA units busy for about `approx_ms` (it stops on
// %globaltimer, so the time holds whatever the clock does). `sms` is the device's SM count;
// the grid fills each SM to full occupancy. Does not synchronise.
void launch_busy(cudaStream_t s, int sms, double approx_ms);

}  // namespace kbench
