// The layers of docs/architecture.md, enforced on the sources: every #include "..." under
// src/, kernels/ and experiments/ points down (or within its own folder), never up or sideways.
//   core -> device, record -> harness, report -> registry -> kernels, plugin -> experiments -> cli
// The Python module (src/python/) stands beside the registry: it times callables on the harness,
// and knows no op, kernel or experiment. src/plugin/ loads variants from shared libraries at run
// time: a family that is not compiled in.
// Inside kernels/, a family includes only itself, kernels/common/ and the list of families.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;

// The layer of a path relative to the source root, and its component (what may include
// itself freely): "" for a path that is not in a layer.
struct Place {
  int layer = -1;
  std::string component;
};

Place place_of(const std::string& path) {
  static const std::map<std::string, int> layers = {
      {"src/core/", 0},     {"src/device/", 1},  {"src/record/", 1},   {"src/harness/", 2},
      {"src/report/", 2},   {"src/registry/", 3}, {"src/python/", 3},   {"kernels/", 4},     {"src/plugin/", 4},
      {"experiments/", 5}, {"src/cli/", 6},      {"src/main.cpp", 6}};
  for (const auto& [prefix, layer] : layers)
    if (path.starts_with(prefix)) {
      std::string component = prefix == "src/main.cpp" ? "src/cli/" : prefix;  // main wires the CLI
      if (prefix == "kernels/") {  // each family (kernels/rows/, ...) is its own component
        const auto slash = path.find('/', prefix.size());
        component = slash == std::string::npos ? path : path.substr(0, slash + 1);
      }
      return {layer, component};
    }
  return {};
}

bool allowed(const std::string& from, const std::string& to) {
  const Place a = place_of(from), b = place_of(to);
  if (a.component == b.component) return true;
  if (a.layer == 4 && b.layer == 4)  // a family may use the shared kernels and the family list
    return b.component == "kernels/common/" || to.starts_with("kernels/all_ops.");
  return b.layer >= 0 && b.layer < a.layer;
}

TEST(Layers, EveryIncludePointsDown) {
  const fs::path root = KBENCH_SOURCE_DIR;
  const std::regex include("^\\s*#\\s*include\\s+\"([^\"]+)\"");
  int includes = 0;
  for (const char* top : {"src", "kernels", "experiments"})
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      if (!entry.is_regular_file()) continue;
      const std::string from = entry.path().lexically_relative(root).generic_string();
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        const std::string to = m[1].str();
        if (!fs::exists(root / to) && !fs::exists(root / "src" / to)) continue;  // a system or generated header
        const std::string target = fs::exists(root / to) ? to : "src/" + to;
        ++includes;
        EXPECT_TRUE(allowed(from, target)) << from << " includes " << target;
      }
    }
  EXPECT_GT(includes, 100);
}

TEST(Layers, TheRuleRefusesUpwardAndSidewaysIncludes) {
  EXPECT_TRUE(allowed("src/harness/runner.cpp", "src/record/result.hpp"));
  EXPECT_TRUE(allowed("kernels/rows/row_sum.cu", "kernels/common/dispatch.cuh"));
  EXPECT_FALSE(allowed("src/harness/runner.cpp", "src/registry/registry.hpp"));
  EXPECT_TRUE(allowed("src/python/callable_run.cpp", "src/harness/runner.hpp"));
  EXPECT_FALSE(allowed("src/python/module.cpp", "src/registry/registry.hpp"));
  EXPECT_FALSE(allowed("src/record/verify.cpp", "src/device/device_info.hpp"));
  EXPECT_FALSE(allowed("src/core/errors.hpp", "kernels/all_ops.hpp"));
  EXPECT_FALSE(allowed("kernels/rows/row_sum.cu", "kernels/add/add.hpp"));
  EXPECT_FALSE(allowed("experiments/sweep.cpp", "src/cli/commands.hpp"));
}

}  // namespace
