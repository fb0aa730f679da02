// The add op family: op definition (add_op.cpp, host) and variants (add.cu, device).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "registry/registry.hpp"

namespace kbench {

Op make_add_op();
void register_add_variants(Registry& r);

// z[0, n) = x + y with 16-byte loads, grid-stride; exposed so tests can drive it directly
// (with a short n, it is the "dropped tail" the checker must catch).
void launch_add_vec16(DType t, const void* x, const void* y, void* z, std::int64_t n,
                      cudaStream_t stream);

}  // namespace kbench
