// Launches that <<<>>> cannot express: a thread-block cluster, and programmatic dependent
// launch (a kernel queued to start while the one before it is still running, waiting inside
// for its results). One place for cudaLaunchKernelEx's attributes, so that a kernel family
// does not spell them out again (the GEMM's Hopper kernel and rmsnorm_backward both use it).
#pragma once

#include <cuda_runtime.h>

namespace kbench {

struct LaunchShape {
  dim3 grid, block;
  std::size_t shared = 0;
  cudaStream_t stream = nullptr;
  unsigned cluster = 1;  // blocks a cluster along x; 1: no cluster launch
  // The kernel may begin before the previous kernel in the stream ends: it must call
  // wait_for_previous_grid() before it reads what that kernel wrote (Hopper and later; older
  // devices ignore the attribute and run the two in order as usual).
  bool overlap_previous = false;
};

template <class... Params, class... Args>
cudaError_t launch_ex(void (*kernel)(Params...), const LaunchShape& s, Args... args) {
  cudaLaunchAttribute attrs[2]{};
  unsigned n = 0;
  if (s.cluster > 1) {
    attrs[n].id = cudaLaunchAttributeClusterDimension;
    attrs[n].val.clusterDim = {s.cluster, 1, 1};
    ++n;
  }
  if (s.overlap_previous) {
    attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  cudaLaunchConfig_t config{};
  config.gridDim = s.grid;
  config.blockDim = s.block;
  config.dynamicSmemBytes = s.shared;
  config.stream = s.stream;
  config.attrs = n > 0 ? attrs : nullptr;
  config.numAttrs = n;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

// How many clusters of `cluster` blocks of `kernel` fit the GPU at once; 0 where it has no
// clusters or the launch cannot have them. Asked with a grid of one cluster: a grid that is
// not whole clusters is an error (which is cleared here, not left for the next check).
template <class Kernel>
int resident_clusters(Kernel kernel, unsigned cluster, unsigned threads, std::size_t shared) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim = {cluster, 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(cluster);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared;
  config.attrs = &attr;
  config.numAttrs = 1;
  int count = 0;
  if (cudaOccupancyMaxActiveClusters(&count, kernel, &config) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

// Whether a grid of `second_blocks` blocks of `second` can be resident beside one of
// `first_blocks` blocks of `first` (both of `threads` threads, no dynamic shared memory), each
// grid's share of an SM (its blocks over the SMs, rounded up) taken as a fraction of what the
// occupancy calculator fits of that kernel alone, the two fractions at most a whole SM. It decides
// when a two-kernel plan's first kernel lets its second, launched overlapping it, start (below):
// at once where the second fits beside it, so that its launch and placement are hidden; only as
// the first's blocks end where it does not, since blocks placed early would take the slots the
// first grid's blocks leave one at a time and the rest of the second grid would run as a wave
// of its own (softmax's split at 64x131072: 576 + 576 blocks over 132 SMs, float32, 32.4 us triggering at
// once against 27.0 us as the blocks end, H100, cupti: docs/kernels.md, split pieces).
template <class First, class Second>
bool grids_fit_together(First first, unsigned first_blocks, Second second, unsigned second_blocks, int threads) {
  int device = 0, sms = 0, fit_first = 0, fit_second = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit_first, first, threads, 0) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit_second, second, threads, 0) != cudaSuccess) {
    (void)cudaGetLastError();  // no answer: the safe side, triggering as the blocks end
    return false;
  }
  if (sms <= 0 || fit_first <= 0 || fit_second <= 0) return false;
  const auto per_sm = [&](unsigned blocks) { return (static_cast<long long>(blocks) + sms - 1) / sms; };
  return per_sm(first_blocks) * fit_second + per_sm(second_blocks) * fit_first <=
         static_cast<long long>(fit_first) * fit_second;
}

// wait_for_previous_grid: in a kernel launched with overlap_previous, wait until the kernel
// before it in the stream has ended and its writes are visible. trigger_next_grid: in that
// kernel before, let the next one start launching now (all of its blocks must call it, or end);
// by default that is when it ends, and the overlap hides only the next launch's own latency.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void trigger_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

}  // namespace kbench
