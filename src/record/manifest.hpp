// The build manifest: SHA-256 of every source file that went into this binary, fixed at build
// time (cmake/Manifest.cmake runs kbench_manifest_tool). A result carries it, so that any
// saved number can be traced to the code that produced it, and `kbench verify` can tell when
// that code has since changed.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kbench {

// Relative path (forward slashes, from the source root) -> lower-case hex SHA-256 of the
// LF-normalised content. Defined in the generated build/generated/manifest_data.cpp.
const std::map<std::string, std::string>& build_manifest();

// The source tree to check against: $KBENCH_ROOT if set, else the tree this binary was built
// from if it is still there, else the first directory above the cwd that looks like a kbench
// tree (CMakeLists.txt and kernels/). Throws UsageError if there is none.
std::filesystem::path source_root();

// Files where the tree at `root` differs from build_manifest(): "<path> (changed)",
// "<path> (missing)", and "<path> (not in the manifest)" for new files under src/, kernels/
// and experiments/. Empty when the binary was built from exactly this tree.
std::vector<std::string> tree_differences(const std::filesystem::path& root);

// Throws UsageError (one line: how many files, the first) when tree_differences(root) is not
// empty. An experiment calls it before any GPU work: its result would record the tree's commit
// and diff as the code measured while this binary ran other code (session 33: a warm GPU
// machine's ninja kept the objects of a file put back to an older version, and only `kbench
// verify` caught the result, after the run).
void require_tree_matches_binary(const std::filesystem::path& root);

// The manifest's scope: the folders and files whose every file goes into the binary
// (cmake/Manifest.cmake hashes them). Provenance compares the same scope with the commit.
inline const std::vector<std::string> kSourceScope = {
    "src", "kernels", "experiments", "cmake", "CMakeLists.txt", "CMakePresets.json",
    "tests/CMakeLists.txt"};

// The files every op's timing depends on, whatever the op and the experiment: how it is
// built (flags, architectures) and the harness, core, device and registry code.
inline const std::vector<std::string> kBuildSourcePrefixes = {"CMakeLists.txt",
                                                              "CMakePresets.json", "cmake/"};
inline const std::vector<std::string> kHarnessSourcePrefixes = {"src/harness/", "src/core/",
                                                                "src/device/", "src/registry/"};

// The "manifest" block of a result: {"algorithm": "sha256", "files": build_manifest(),
// "measured": {op: [manifest paths starting with one of its prefixes, a build or harness
// prefix, or one of `experiment_sources`]}}. `experiment_sources` are the prefixes of the
// experiment that ran (its loop and analysis shape every number, e.g. {"experiments/sweep"}).
// `measured` is what verify holds a result to; pass every op that has records.
nlohmann::json manifest_block(
    const std::map<std::string, std::vector<std::string>>& op_source_prefixes,
    const std::vector<std::string>& experiment_sources);

// True for paths the manifest leaves out: hidden files and folders (editor swap files, .git).
bool is_ignored_source_path(const std::filesystem::path& relative);

}  // namespace kbench
