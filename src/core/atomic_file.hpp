// Writing a file so that a reader (or a crash) never sees half of it: the text goes to a
// temporary file in the same folder, is forced to disk, and is then renamed into place.
#pragma once

#include <filesystem>
#include <string>

namespace kbench {

enum class Overwrite { replace, never };

// Publishes `text` as `target`. With Overwrite::never an existing target is left alone and
// false is returned (rename() would silently replace an earlier run); otherwise returns true.
// The temporary name starts with '.' and ends in ".partial", so tools that read every *.json
// of a folder never take one for a finished file. Throws UsageError when it cannot write.
bool write_file_atomically(const std::filesystem::path& target, const std::string& text,
                           Overwrite mode);

}  // namespace kbench
