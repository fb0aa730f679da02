#include "plugin/plugin_loader.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "plugin/plugin_library.hpp"
#include "plugin/plugin_variant.hpp"

namespace kbench {

namespace {

// The variant's name as a message may show it, whatever the plugin put there.
std::string shown_name(const kbench_plugin_variant& v) {
  return v.name == nullptr ? std::string("(no name)") : printable(v.name, 60);
}

// Registers the variants of a loaded library; records and returns what was refused.
void register_variants(const PluginLibrary& lib, Registry& registry, nlohmann::json& block, PluginLoad& load) {
  const std::string label = lib.path.filename().string();
  const kbench_plugin& table = *lib.table;
  block["name"] = table.name;
  block["abi_version"] = table.abi_version;
  for (std::int32_t i = 0; i < table.variant_count; ++i) {
    const kbench_plugin_variant& v = table.variants[i];
    const std::string why = plugin_variant_problem(v, registry);
    if (!why.empty()) {
      const std::string line = "plugin variant refused: " + printable(lib.path.string(), 200) + ": variant '" +
                               shown_name(v) + "' of op '" + (v.op ? printable(v.op, 60) : std::string("(none)")) + "': " + why;
      block["refused"].push_back(line);
      load.refusals.push_back(line);
      continue;
    }
    const Op& op = registry.op(v.op);
    registry.add_variant(make_plugin_variant(v, op, label));
    block["variants"].push_back(op.name + "/" + plugin_variant_name(v.name));
    ++load.registered;
  }
}

}  // namespace

PluginLoad load_plugins(const std::vector<std::string>& paths, Registry& registry) {
  PluginLoad load;
  std::vector<std::filesystem::path> resolved;
  for (const std::string& given : paths) {  // every path checked before any library is opened
    const std::filesystem::path path = plugin_path(given);
    if (std::find(resolved.begin(), resolved.end(), path) != resolved.end())
      throw UsageError("--plugin '" + printable(given, 200) + "' is given twice");
    resolved.push_back(path);
  }
  for (const std::filesystem::path& path : resolved) {
    const PluginLibrary lib = open_plugin_library(path);
    nlohmann::json block = {{"path", printable(path.string(), 4096)}, {"sha256", lib.sha256},
                            {"variants", nlohmann::json::array()}, {"refused", nlohmann::json::array()}};
    if (lib.table == nullptr) {
      const std::string line = "plugin refused: " + printable(path.string(), 200) + ": " + lib.refused;
      block["refused"].push_back(line);
      load.refusals.push_back(line);
    } else {
      register_variants(lib, registry, block, load);
    }
    load.libraries.push_back(std::move(block));
  }
  if (!paths.empty() && load.registered == 0) {
    if (load.refusals.size() == 1) throw UsageError(load.refusals.front());
    for (const std::string& line : load.refusals) spdlog::error("{}", line);
    throw UsageError("no plugin variant could be loaded (" + std::to_string(load.refusals.size()) +
                     " refusals above)");
  }
  for (const std::string& line : load.refusals) spdlog::error("{}", line);
  for (const auto& block : load.libraries)
    if (!block["variants"].empty())
      spdlog::info("plugin {} ({}): {}", block.value("name", ""), block["path"].get<std::string>(),
                   block["variants"].dump());
  return load;
}

void end_with_plugin_refusals(const nlohmann::json& libraries) {
  if (const int n = plugin_refusals(libraries))
    throw Failure(std::to_string(n) + " plugin refusal(s) (see the log): the rest went on without them");
}

int plugin_refusals(const nlohmann::json& libraries) {
  int n = 0;
  if (!libraries.is_array()) return 0;
  for (const auto& block : libraries)
    if (block.is_object() && block.contains("refused") && block["refused"].is_array())
      n += static_cast<int>(block["refused"].size());
  return n;
}

}  // namespace kbench
