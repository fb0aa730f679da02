// The copy op family: the op (copy_op.cpp, host) and its variants with their registration
// (copy.cu, beside the kernels).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "registry/registry.hpp"

namespace kbench {

Op make_copy_op();

// y[0, n) = x[0, n) with 16-byte loads and stores; `bytes` is the length in bytes.
void launch_copy_vec16(const void* x, void* y, std::int64_t bytes, cudaStream_t stream);

}  // namespace kbench
