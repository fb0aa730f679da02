// The copy op family: op definition (copy_op.cpp, host) and variants (copy.cu, device).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "registry/registry.hpp"

namespace kbench {

Op make_copy_op();
void register_copy_variants(Registry& r);

// y[0, n) = x[0, n) with 16-byte loads and stores; `bytes` is the length in bytes.
void launch_copy_vec16(const void* x, void* y, std::int64_t bytes, cudaStream_t stream);

}  // namespace kbench
