// Shapes as users write them ("4096x4096", "2^20", "3x2^20") and as records print them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kbench {

using Shape = std::vector<std::int64_t>;

// The largest dimension any shape may have: 2^33 elements (32 GiB of float32) is already past
// what one tensor of a case can take on a 141 GB GPU beside its copies; a larger number is a
// typo (or 1e20 from a config), not a case.
inline constexpr std::int64_t kMaxDim = std::int64_t{1} << 33;

// UsageError naming `where` unless 1 <= dim <= kMaxDim.
void check_dim(std::int64_t dim, const std::string& where);

// "4096x4096", "1048576", "2^20", "3x2^20" -> dims (at most 3, each 1..kMaxDim). Throws
// UsageError when malformed.
Shape parse_shape(const std::string& text);

// {4096, 4096} -> "4096x4096"; {} -> "".
std::string shape_string(const Shape& shape);

}  // namespace kbench
