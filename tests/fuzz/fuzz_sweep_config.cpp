// libFuzzer target: a sweep config's text through parse_sweep_config, the reader `kbench run`
// and `check` use. Anything it refuses must be a UsageError; what it accepts must hold the
// ranges it promises.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "experiments/sweep_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const kbench::SweepSettings s =
        kbench::parse_sweep_config(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    if (s.cases.empty() || s.visits < 1 || s.samples < 1 || s.visits > kbench::kMaxVisitsOrSamples ||
        s.samples > kbench::kMaxVisitsOrSamples)
      __builtin_trap();
    for (const auto& c : s.cases)
      for (const auto& shape : c.shapes)
        for (const std::int64_t dim : shape)
          if (dim < 1 || dim > kbench::kMaxDim) __builtin_trap();
  } catch (const kbench::UsageError&) {
  }
  return 0;
}
