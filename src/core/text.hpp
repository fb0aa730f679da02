// Small text helpers shared across layers.
#pragma once

#include <string>
#include <string_view>

namespace kbench {

// `s` without leading and trailing spaces, tabs, CRs and LFs.
std::string trim(std::string_view s);

// The current UTC time: "2026-01-31T12:00:00Z" (ISO 8601, for records) or, with compact,
// "20260131T120000Z" (for file names).
std::string utc_now(bool compact = false);

// Six random lower-case hex digits (not reproducible: for names that must not collide).
std::string random_hex6();

}  // namespace kbench
