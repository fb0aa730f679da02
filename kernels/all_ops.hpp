// The registry of this build: every op family and its variants (kernels/all_ops.cpp).
#pragma once

#include "registry/registry.hpp"

namespace kbench {

// Built on first use; registration builds tables only and never touches the GPU.
const Registry& registry();

// The same registry, open to additions: `--plugin` (src/plugin/) adds each plugin's variants
// here before anything plans a run, and so before anything holds a Variant* (the registry keeps
// its variants in a vector). Nothing else adds to it.
Registry& registry_for_plugins();

}  // namespace kbench
