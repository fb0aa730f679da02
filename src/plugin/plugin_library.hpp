// Opening a plugin library (kbench_plugin.h): the file, its SHA-256, dlopen, the entry point and
// the ABI version, in that order, each step refusing the library with one line of why.
#pragma once

#include <filesystem>
#include <string>

#include "plugin/kbench_plugin.h"

namespace kbench {

struct PluginLibrary {
  std::filesystem::path path;  // absolute and normalised: what was opened and is recorded
  std::string sha256;          // of the file's bytes, as opened
  // The plugin's table, null when the library was refused. A loaded library stays open for the
  // life of the process (its variants' launchers live in it); a refused one is closed.
  const kbench_plugin* table = nullptr;
  std::string refused;  // why, in one line; empty when loaded
};

// The absolute path of `given`: UsageError (one line) unless it names a readable regular file.
// dlopen would search the library path for a bare "libx.so"; a plugin is always the file named.
std::filesystem::path plugin_path(const std::string& given);

// Opens the library at `path` (plugin_path's) and reads its table, or says why not: dlopen's
// own error (not a shared library, an unresolved symbol), no KBENCH_PLUGIN_ENTRY_SYMBOL, a null
// table, another ABI version (read from the first field alone), a bad plugin name, no variants.
PluginLibrary open_plugin_library(const std::filesystem::path& path);

}  // namespace kbench
