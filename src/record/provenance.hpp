// Where a run came from: the host, the commit its sources are at and, when the tree was not
// exactly that commit, the diff from it. The repository's history plus that diff is the store
// of measured sources: `kbench verify` rebuilds a result's files from them.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "record/manifest.hpp"

namespace kbench {

// {"host": hostname, "git": {...}}; docs/schema.md lists the git fields. In short: the base
// commit is the one .kbench-git-commit names (a copy of the tree over an older or no .git, as
// on the GPU machine) when git has no HEAD or the marker differs from it, else HEAD. The
// manifest's scope of the working tree is compared with it through a temporary index (the
// repository's own is never touched); `dirty` is false only when that comparison was made and
// found no difference, and a dirty tree records the diff. results/ and archive/ are outputs,
// outside the scope.
nlohmann::json provenance(const std::filesystem::path& root = source_root());

// The commit named by .kbench-git-commit's first line, if the file says one.
std::optional<std::string> marker_commit(const std::filesystem::path& root);

}  // namespace kbench
