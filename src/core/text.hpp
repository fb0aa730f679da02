// Small text helpers shared across layers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kbench {

// `s` without leading and trailing spaces, tabs, CRs and LFs.
std::string trim(std::string_view s);

// The current UTC time: "2026-01-31T12:00:00Z" (ISO 8601, for records) or, with compact,
// "20260131T120000Z" (for file names).
std::string utc_now(bool compact = false);

// True when `s` is well-formed UTF-8 (what a JSON string can hold; nlohmann refuses to write
// anything else).
bool is_valid_utf8(std::string_view s);

// `s` as it may be shown on a terminal, on one line: control characters (newlines, escape
// sequences, C1 controls) and bytes that are not UTF-8 become \xNN, and past max_bytes only its
// start and end are kept, with how many bytes were left out between them. For echoing input
// back in messages ("unknown op '\x1b[31m...'").
std::string printable(std::string_view s, std::size_t max_bytes = 300);

// `value` through a printf pattern with one double ("%.2fx" -> "1.31x"), for tables and statements.
std::string format_number(const char* pattern, double value);

// `text` as a whole number in [lo, hi] (decimal digits, an optional sign, nothing else), or
// nothing: "2.5", "1e3", "12abc", "" and out-of-range values are not counts.
std::optional<long long> parse_whole(const std::string& text, long long lo, long long hi);

// Six random lower-case hex digits (not reproducible: for names that must not collide).
std::string random_hex6();

}  // namespace kbench
