// Shared by the elementwise families (copy, add): their tensors are one row of n elements.
#pragma once

#include "harness/problem.hpp"

namespace kbench {

// The case's [n] as a 1 x n row named `name`.
inline TensorDesc vector_tensor(const Case& c, const char* name) {
  return TensorDesc{name, c.dtype, 1, c.shape.at(0), c.shape.at(0)};
}

}  // namespace kbench
