#include "harness/problem.hpp"

#include <cstdio>
#include <stdexcept>

namespace kbench {

double Case::param(const std::string& name) const {
  const auto it = params.find(name);
  if (it == params.end()) throw std::logic_error("case of " + op + " has no parameter '" + name + "'");
  return it->second;
}

std::string case_label(const Case& c) {
  std::string label = c.op + " " + std::string(dtype_name(c.dtype)) + " " + shape_string(c.shape);
  for (const auto& [name, value] : c.params) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s=%g", name.c_str(), value);
    label += buf;
  }
  return label;
}

}  // namespace kbench
