#include "cli/whole_number.hpp"

#include <string>

#include "core/text.hpp"

namespace kbench {

CLI::Validator whole_in(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        if (parse_whole(text, lo, hi)) return "";
        return "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

}  // namespace kbench
