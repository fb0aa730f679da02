#include "core/shape.hpp"

#include <charconv>
#include <string_view>

#include "core/errors.hpp"

namespace kbench {
namespace {

std::int64_t parse_dim(const std::string& text, const std::string& whole) {
  auto number = [&](std::string_view s) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 0)
      throw UsageError("malformed shape '" + whole + "' (expected N, RxC or MxNxK; 2^k allowed)");
    return v;
  };
  const auto caret = text.find('^');
  std::int64_t v = 0;
  if (caret == std::string::npos) {
    v = number(text);
  } else {
    const std::int64_t base = number(std::string_view(text).substr(0, caret));
    const std::int64_t exp = number(std::string_view(text).substr(caret + 1));
    if (base != 2 || exp > 33) throw UsageError("malformed shape '" + whole + "' (only 2^k, k <= 33)");
    v = std::int64_t{1} << exp;
  }
  check_dim(v, "shape '" + whole + "'");
  return v;
}

}  // namespace

void check_dim(std::int64_t dim, const std::string& where) {
  if (dim < 1 || dim > kMaxDim)
    throw UsageError(where + ": a dimension must be between 1 and 2^33, got " + std::to_string(dim));
}

Shape parse_shape(const std::string& text) {
  if (text.empty()) throw UsageError("malformed shape '' (expected N, RxC or MxNxK)");
  Shape dims;
  std::size_t start = 0;
  while (true) {
    const auto x = text.find('x', start);
    dims.push_back(parse_dim(text.substr(start, x - start), text));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (dims.size() > 3) throw UsageError("malformed shape '" + text + "' (at most 3 dimensions)");
  return dims;
}

std::string shape_string(const Shape& shape) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

}  // namespace kbench
