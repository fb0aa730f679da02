// CHECK for the standalone probes under scripts/ (mma_ceiling.cu, stream_mix.cu: each built
// alone by nvcc through gpu_session.sh's MICROBENCH): a failed CUDA call prints where and why,
// and the probe exits 1.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)
