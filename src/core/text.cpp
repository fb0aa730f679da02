#include "core/text.hpp"

#include <cstdio>
#include <exception>
#include <ctime>
#include <random>
#include <vector>

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

namespace {

// The length of the well-formed UTF-8 sequence at s[i] and its code point, or 0 when there is
// none (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& code) {
  const auto c = static_cast<unsigned char>(s[i]);
  // The sequence length and the smallest code point it may encode (no overlong forms).
  std::size_t length = 0;
  char32_t min = 0;
  if (c < 0x80) {
    length = 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    min = 0x10000;
  }
  if (length == 0 || i + length > s.size()) return 0;
  code = length == 1 ? c : c & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(s[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  char32_t code = 0;
  for (std::size_t i = 0, n = 0; i < s.size(); i += n)
    if ((n = utf8_sequence(s, i, code)) == 0) return false;
  return true;
}

std::string printable(std::string_view s, std::size_t max_bytes) {
  // Each character of `s` as it will be shown: itself, or \xNN for each of its bytes.
  std::vector<std::string> shown;
  std::size_t total = 0;
  for (std::size_t i = 0; i < s.size();) {
    char32_t code = 0;
    const std::size_t n = utf8_sequence(s, i, code);
    // C0 controls (newline, ESC), DEL and C1 controls (U+0080..U+009F: CSI among them) would
    // act on the terminal; a byte that is not UTF-8 would print as noise.
    const bool control = n == 0 || code < 0x20 || (code >= 0x7F && code <= 0x9F);
    std::string unit;
    for (std::size_t k = 0; k < (n == 0 ? 1 : n); ++k) {
      if (!control) {
        unit += s[i + k];
        continue;
      }
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(s[i + k]));
      unit += hex;
    }
    total += unit.size();
    shown.push_back(std::move(unit));
    i += n == 0 ? 1 : n;
  }
  std::string out;
  if (total <= max_bytes) {
    for (const auto& unit : shown) out += unit;
    return out;
  }
  // Too long: its start and its end (where a message often says what was expected), with how
  // much was left out between them.
  std::size_t head = 0, head_bytes = 0, tail = shown.size(), tail_bytes = 0;
  while (head < tail && head_bytes + shown[head].size() <= max_bytes * 2 / 3) head_bytes += shown[head++].size();
  while (tail > head && tail_bytes + shown[tail - 1].size() <= max_bytes / 3) tail_bytes += shown[--tail].size();
  for (std::size_t k = 0; k < head; ++k) out += shown[k];
  out += " [... " + std::to_string(total - head_bytes - tail_bytes) + " bytes left out ...] ";
  for (std::size_t k = tail; k < shown.size(); ++k) out += shown[k];
  return out;
}

std::string random_hex6() {
  static std::mt19937 gen{std::random_device{}()};
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06x", static_cast<unsigned>(gen() & 0xffffff));
  return buf;
}

std::string format_number(const char* pattern, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, value);
  return buf;
}

std::optional<long long> parse_whole(const std::string& text, long long lo, long long hi) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

}  // namespace kbench
