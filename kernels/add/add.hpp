// The add op family: the op (add_op.cpp, host) and its variants with their registration
// (add.cu, beside the kernels).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "registry/registry.hpp"

namespace kbench {

Op make_add_op();

// z[0, n) = x + y with 16-byte loads, grid-stride; exposed so tests can drive it directly
// (with a short n, it is the "dropped tail" the checker must catch).
void launch_add_vec16(DType t, const void* x, const void* y, void* z, std::int64_t n,
                      cudaStream_t stream);

}  // namespace kbench
