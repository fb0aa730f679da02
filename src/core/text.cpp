#include "core/text.hpp"

#include <cstdio>
#include <ctime>
#include <random>

namespace kbench {

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

std::string utc_now(bool compact) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string random_hex6() {
  static std::mt19937 gen{std::random_device{}()};
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06x", static_cast<unsigned>(gen() & 0xffffff));
  return buf;
}

}  // namespace kbench
