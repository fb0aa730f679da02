// Command-line numbers that must be whole and in range, with a one-line message.
#pragma once

#include <CLI/CLI.hpp>

namespace kbench {

// A CLI11 check for a whole number in [lo, hi]. CLI11's own range checks print their bounds as
// doubles, over 300 characters for "0 or more", and accept 2.5 where a count is meant.
CLI::Validator whole_in(long long lo, long long hi);

}  // namespace kbench
