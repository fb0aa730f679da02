// Shared by the elementwise families (copy, add): their tensors are one row of n elements.
#pragma once

#include <vector>

#include "registry/registry.hpp"

namespace kbench {

// The case's [n] as a 1 x n row named `name`.
inline TensorDesc vector_tensor(const Case& c, const char* name) {
  return TensorDesc{name, c.dtype, 1, c.shape.at(0), c.shape.at(0)};
}

// An elementwise op on [n] shapes: the named inputs and output as n-element rows, inputs drawn
// uniform in [-1, 1] (in order), its sources its folder and kernels/common/, no flops counted.
// The caller sets its oracle, tolerance and bytes.
Op make_vector_op(const char* name, const char* summary, const char* folder, std::vector<const char*> inputs,
                  const char* output);

}  // namespace kbench
