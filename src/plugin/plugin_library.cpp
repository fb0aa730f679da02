#include "plugin/plugin_library.hpp"

#include <dlfcn.h>

#include <fstream>
#include <sstream>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "plugin/plugin_variant.hpp"
#include "record/sha256.hpp"

namespace kbench {

namespace fs = std::filesystem;

fs::path plugin_path(const std::string& given) {
  const std::string shown = "--plugin '" + printable(given, 200) + "'";
  if (given.empty()) throw UsageError("--plugin needs the path of a shared library");
  std::error_code ec;
  const fs::path path = fs::absolute(fs::path(given), ec).lexically_normal();
  if (ec || !fs::exists(path, ec)) throw UsageError(shown + ": no such file");
  if (!fs::is_regular_file(path, ec)) throw UsageError(shown + ": not a file");
  if (!std::ifstream(path, std::ios::binary)) throw UsageError(shown + ": cannot be read");
  return path;
}

PluginLibrary open_plugin_library(const fs::path& path) {
  PluginLibrary lib;
  lib.path = path;
  {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in && !in.eof()) throw UsageError("plugin '" + printable(path.string(), 200) + "' cannot be read");
    lib.sha256 = sha256_hex(bytes.str());
  }
  // RTLD_NOW: an unresolved symbol refuses the library here, not as a crash in the middle of a
  // run. RTLD_LOCAL: two plugins may define the same names.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    lib.refused = "dlopen failed: " + printable(why ? why : "no reason given", 300);
    return lib;
  }
  const auto refuse = [&](std::string why) {
    dlclose(handle);
    lib.refused = std::move(why);
    return lib;
  };
  dlerror();  // clear, so that a null symbol is told from a lookup failure
  void* entry = dlsym(handle, KBENCH_PLUGIN_ENTRY_SYMBOL);
  if (entry == nullptr)
    return refuse("it exports no '" KBENCH_PLUGIN_ENTRY_SYMBOL "' (not a kbench plugin, or the function was "
                  "compiled without extern \"C\" or hidden)");
  const kbench_plugin* table = reinterpret_cast<kbench_plugin_entry_fn>(entry)();
  if (table == nullptr) return refuse(KBENCH_PLUGIN_ENTRY_SYMBOL "() returned no table");
  // The version first, and nothing else of the table before it matches: another version's
  // table may be laid out differently past its first field.
  if (table->abi_version != KBENCH_PLUGIN_ABI_VERSION)
    return refuse("it was built for plugin ABI version " + std::to_string(table->abi_version) + ", this kbench loads " +
                  std::to_string(KBENCH_PLUGIN_ABI_VERSION) + " only (rebuild it against this kbench's src/plugin/kbench_plugin.h)");
  if (const std::string why = plugin_name_problem(table->name); !why.empty()) return refuse("the plugin's name " + why);
  if (table->variants == nullptr || table->variant_count <= 0) return refuse("it registers no variants");
  lib.table = table;
  return lib;
}

}  // namespace kbench
