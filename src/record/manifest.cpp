#include "record/manifest.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/errors.hpp"
#include "record/sha256.hpp"

namespace kbench {
namespace fs = std::filesystem;

namespace {

bool looks_like_source_root(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "CMakeLists.txt", ec) && fs::is_directory(dir / "kernels", ec);
}

// The folders whose every file belongs in the manifest (the CMake files are listed by name).
constexpr const char* kScannedFolders[] = {"src", "kernels", "experiments"};

}  // namespace

bool is_ignored_source_path(const fs::path& relative) {
  for (const fs::path& part : relative)
    if (part.string().starts_with(".")) return true;
  return false;
}

fs::path source_root() {
  if (const char* env = std::getenv("KBENCH_ROOT"); env && *env) {
    std::error_code ec;
    if (!fs::is_directory(env, ec))
      throw UsageError(std::string("KBENCH_ROOT=") + env + " is not a directory");
    return fs::path(env);
  }
#ifdef KBENCH_SOURCE_DIR
  if (looks_like_source_root(KBENCH_SOURCE_DIR)) return fs::path(KBENCH_SOURCE_DIR);
#endif
  std::error_code ec;
  for (fs::path dir = fs::current_path(ec); !ec && !dir.empty(); dir = dir.parent_path()) {
    if (looks_like_source_root(dir)) return dir;
    if (dir == dir.root_path()) break;
  }
  throw UsageError("cannot find the kbench source tree: run inside it or set KBENCH_ROOT");
}

std::vector<std::string> tree_differences(const fs::path& root) {
  const auto& manifest = build_manifest();
  std::vector<std::string> differences;
  for (const auto& [path, hex] : manifest) {
    std::error_code ec;
    if (!fs::exists(root / path, ec)) {
      differences.push_back(path + " (missing)");
      continue;
    }
    try {
      if (hash_source_file(root / path) != hex) differences.push_back(path + " (changed)");
    } catch (const UsageError&) {
      differences.push_back(path + " (unreadable)");
    }
  }
  for (const char* folder : kScannedFolders) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root / folder, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      fs::path relative = it->path().lexically_relative(root);
      if (is_ignored_source_path(relative)) continue;
      if (!manifest.contains(relative.generic_string()))
        differences.push_back(relative.generic_string() + " (not in the manifest)");
    }
  }
  return differences;
}

void require_tree_matches_binary(const fs::path& root) {
  const auto differences = tree_differences(root);
  if (differences.empty()) return;
  throw UsageError("this binary was built from other sources than " + root.string() + " holds (" +
                   std::to_string(differences.size()) + " file(s), first " + differences.front() +
                   "): rebuild it before measuring");
}

nlohmann::json manifest_block(
    const std::map<std::string, std::vector<std::string>>& op_source_prefixes,
    const std::vector<std::string>& experiment_sources) {
  std::vector<std::string> always = kBuildSourcePrefixes;
  always.insert(always.end(), kHarnessSourcePrefixes.begin(), kHarnessSourcePrefixes.end());
  always.insert(always.end(), experiment_sources.begin(), experiment_sources.end());
  const auto& files = build_manifest();
  nlohmann::json measured = nlohmann::json::object();
  for (const auto& [op, prefixes] : op_source_prefixes) {
    nlohmann::json paths = nlohmann::json::array();
    for (const auto& [path, hex] : files) {
      auto starts = [&](const std::string& prefix) { return path.starts_with(prefix); };
      if (std::any_of(prefixes.begin(), prefixes.end(), starts) ||
          std::any_of(always.begin(), always.end(), starts))
        paths.push_back(path);
    }
    measured[op] = paths;
  }
  return {{"algorithm", "sha256"}, {"files", files}, {"measured", measured}};
}

}  // namespace kbench
