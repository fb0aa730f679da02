// One entry of a plugin's table (kbench_plugin.h) as kbench takes it: checked against the
// registry, then made an ordinary Variant of its op, so that the harness prepares, checks, times
// and records it as it does kbench's own (it never learns that the code came from a plugin).
#pragma once

#include <string>

#include "plugin/kbench_plugin.h"
#include "registry/registry.hpp"

namespace kbench {

// The longest plugin or variant name kbench takes (it shows in tables and file names).
inline constexpr std::size_t kMaxPluginNameBytes = 48;

// Why `name` cannot name a plugin or a variant (one line), or empty: it must be 1 to 48 letters,
// digits, '_' or '-'.
std::string plugin_name_problem(const char* name);

// The name a plugin variant is registered and recorded under: "plugin.<name>".
std::string plugin_variant_name(const char* name);

// Why `v` cannot become a variant in `r` (one line), or empty: an op `r` does not have, a dtype
// code this kbench does not know, no dtypes, no launcher, a bad name, or a name its op already
// has (from kbench, or from a plugin loaded before).
std::string plugin_variant_problem(const kbench_plugin_variant& v, const Registry& r);

// `v` as a Variant of `op` (v.op, which must have passed plugin_variant_problem): unsupported()
// from its dtypes and supports(), its workspace from workspace_bytes(), and a launcher that
// hands the case and the device tensors over, turning an error code into VariantLaunchError
// (the check then fails that case, harness/prepare.hpp). `library` names the plugin in messages.
Variant make_plugin_variant(const kbench_plugin_variant& v, const Op& op, const std::string& library);

}  // namespace kbench
