// The registry of this build: every op family and its variants (kernels/all_ops.cpp).
#pragma once

#include "registry/registry.hpp"

namespace kbench {

// Built on first use; registration builds tables only and never touches the GPU.
const Registry& registry();

}  // namespace kbench
