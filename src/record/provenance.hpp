// Where a run came from: the host and the git commit of the source tree. The manifest is the
// exact record of the sources; the commit is what lets a person check them out again.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "record/manifest.hpp"

namespace kbench {

// {"host": hostname, "git": {"commit": hex or "unknown", "dirty": bool, "source": how}}.
// `source` is "git" (asked git in `root`), ".kbench-git-commit" (a copy of the tree without
// .git, e.g. on the GPU machine, whose first line names the commit; dirty is then unknown and
// written as false) or "none" (commit "unknown"). Git runs read-only (--no-optional-locks):
// a status killed mid-run must not leave .git/index.lock behind.
nlohmann::json provenance(const std::filesystem::path& root = source_root());

}  // namespace kbench
