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
