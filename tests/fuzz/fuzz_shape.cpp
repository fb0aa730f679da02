// libFuzzer target: parse_shape on any text. A malformed shape must be a UsageError (one line
// for the user), never a crash, an overflow, another exception or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "core/shape.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const kbench::Shape shape = kbench::parse_shape(std::string(reinterpret_cast<const char*>(data), size));
    for (const std::int64_t dim : shape)
      if (dim < 1 || dim > kbench::kMaxDim) __builtin_trap();  // accepted, yet out of range
  } catch (const kbench::UsageError&) {
  }
  return 0;
}
