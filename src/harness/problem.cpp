#include "harness/problem.hpp"

#include <cstdio>
#include <stdexcept>

namespace kbench {

std::string_view input_kind_name(InputKind k) {
  switch (k) {
    case InputKind::random: return "random";
    case InputKind::large: return "large";
    case InputKind::cancelling: return "cancelling";
    case InputKind::constant: return "constant";
    case InputKind::spike: return "spike";
  }
  return "?";
}

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
  if (c.input_kind != InputKind::random) label += " inputs=" + std::string(input_kind_name(c.input_kind));
  return label;
}

}  // namespace kbench
