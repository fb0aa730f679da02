// SHA-256 of source files, as recorded in a result's manifest. Line endings are normalised to
// LF before hashing: a CRLF working copy (Windows checkout, autocrlf) must hash the same as a
// fresh clone, or no one else could reproduce the hash.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kbench {

// Lower-case hex digest of the bytes as given.
std::string sha256_hex(std::string_view bytes);

// CRLF and lone CR become LF; everything else is kept byte for byte.
std::string normalize_line_endings(std::string_view text);

// sha256_hex of the file's LF-normalised content; throws UsageError if it cannot be read.
std::string hash_source_file(const std::filesystem::path& file);

}  // namespace kbench
