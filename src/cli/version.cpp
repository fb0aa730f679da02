#include "cli/version.hpp"

#include <algorithm>
#include <cstdio>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "core/build_info.hpp"
#include "record/git_history.hpp"
#include "record/manifest.hpp"
#include "record/provenance.hpp"
#include "record/sha256.hpp"

namespace kbench {
namespace {

// The binary's own identity, whatever git says: one digest over its manifest (path and hash
// of every source it was built from).
std::string manifest_digest() {
  std::string listing;
  for (const auto& [path, hex] : build_manifest()) listing += path + " " + hex + "\n";
  return sha256_hex(listing).substr(0, 16);
}

// The commit the run's provenance would name (the .kbench-git-commit marker where it differs
// from HEAD, else HEAD; record/provenance.hpp), and how this binary's sources stand to it: a
// binary built before the tree changed is not that commit, and neither is a tree with edits.
std::string commit_line() {
  std::filesystem::path root;
  try {
    root = source_root();
  } catch (const UsageError& e) {
    return std::string("unknown (") + e.what() + ")";
  }
  const GitRepo repo(root);
  const bool checkout = repo.is_checkout();
  const auto head = checkout ? repo.resolve_commit("HEAD") : std::nullopt;
  const auto marker = marker_commit(root);
  std::string line;
  if (marker && (!head || repo.resolve_commit(*marker).value_or(*marker) != *head))
    line = repo.resolve_commit(*marker).value_or(*marker) + " (named by " + (root / ".kbench-git-commit").string() + ")";
  else if (head)
    line = *head + " (git HEAD of " + root.string() + ")";
  else
    return "unknown (" + root.string() + " is not a git checkout and has no .kbench-git-commit)";

  const auto differences = tree_differences(root);
  if (!differences.empty())
    return line + "; but the tree differs from this binary's sources in " + std::to_string(differences.size()) +
           " file(s), first " + differences.front() + ": rebuild";
  if (head && checkout) {
    std::vector<std::string> args = {"status", "--porcelain", "--untracked-files=all", "--"};
    args.insert(args.end(), kSourceScope.begin(), kSourceScope.end());
    const GitReply status = repo.run(args);
    if (!status.ok) return line + "; the tree matches this binary, git status failed: " + status.error;
    const std::string changes = trim(status.out);
    if (!changes.empty()) {
      const std::size_t files = std::count(changes.begin(), changes.end(), '\n') + 1;
      return line + " with uncommitted changes in " + std::to_string(files) + " source file(s), as built";
    }
  }
  return line + "; the tree matches this binary";
}

}  // namespace

std::string version_text() {
  const BuildInfo& b = build_info();
  std::string text = "kbench " + b.version + "\n";
  text += "commit:        " + printable(commit_line(), 400) + "\n";
  text += "sources:       " + std::to_string(build_manifest().size()) + " files, manifest sha256 " +
          manifest_digest() + "\n";
  text += "CUDA:          toolkit " + b.cuda_toolkit + ", runtime " + b.cuda_runtime + " (linked statically)\n";
  text += "architectures: " + architectures_text(b.architectures) + " (" + b.architectures_from + ")";
  return text;
}

}  // namespace kbench
