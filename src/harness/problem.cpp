#include "harness/problem.hpp"

namespace kbench {

std::string case_label(const Case& c) {
  return c.op + " " + std::string(dtype_name(c.dtype)) + " " + shape_string(c.shape);
}

}  // namespace kbench
