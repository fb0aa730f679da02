// Shapes as users write them ("4096x4096", "2^20", "3x2^20") and as records print them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kbench {

using Shape = std::vector<std::int64_t>;

// "4096x4096", "1048576", "2^20", "3x2^20" -> dims (at most 3). Throws UsageError when malformed.
Shape parse_shape(const std::string& text);

// {4096, 4096} -> "4096x4096"; {} -> "".
std::string shape_string(const Shape& shape);

}  // namespace kbench
