// `--plugin lib.so` (kbench run, kbench check): every library given, opened (plugin_library.hpp)
// and its variants registered as ordinary variants of their ops (plugin_variant.hpp).
//
// What is refused is refused alone, with one line, and the rest goes on: a library that cannot
// be opened, lacks the entry point or was built for another ABI version; a variant that names
// an op or a dtype kbench does not know, or a name already taken. Only when nothing of what was
// asked for can be loaded is the whole request bad (UsageError, exit 2), as it is for a path
// that names no file or a library given twice.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "registry/registry.hpp"

namespace kbench {

struct PluginLoad {
  // One block per library, for a result's meta.plugins: {"path", "sha256", "name",
  // "abi_version", "variants": ["<op>/plugin.<name>", ...], "refused": ["<one line>", ...]}
  // ("name" and "abi_version" when the table was read, "refused" always, empty when nothing was).
  nlohmann::json libraries = nlohmann::json::array();
  std::vector<std::string> refusals;  // every refusal, one line each, naming the library
  int registered = 0;                 // variants added to the registry
};

// Loads `paths` into `registry`, in order. Logs each refusal as an error line. UsageError for a
// path that is not a readable file, a library given twice, or when `paths` is not empty and no
// variant at all was registered (the one refusal as the message, or a count of them).
PluginLoad load_plugins(const std::vector<std::string>& paths, Registry& registry);

// The refusals recorded in a meta.plugins block (PluginLoad::libraries): what a run that went on
// without them reports at its end (exit status 1, as for a failed check).
int plugin_refusals(const nlohmann::json& libraries);

// Failure (exit status 1) naming the count when plugin_refusals(libraries) is not 0.
void end_with_plugin_refusals(const nlohmann::json& libraries);

}  // namespace kbench
