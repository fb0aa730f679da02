#include "cli/whole_number.hpp"

#include <exception>
#include <string>

namespace kbench {

CLI::Validator whole_in(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::size_t used = 0;
        long long v = 0;
        try {
          v = std::stoll(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size() || v < lo || v > hi)
          return "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
        return "";
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

}  // namespace kbench
