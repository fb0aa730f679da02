#include "cli/version.hpp"

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
  std::string commit;
  if (marker && (!head || repo.resolve_commit(*marker).value_or(*marker) != *head))
    commit = repo.resolve_commit(*marker).value_or(*marker);
  else if (head)
    commit = *head;
  else
    return "unknown (" + root.string() + " is not a git checkout and has no .kbench-git-commit)";
  std::string line = commit + (commit == head.value_or("") ? " (git HEAD of " + root.string() + ")"
                                                            : " (named by " + (root / ".kbench-git-commit").string() + ")");

  const auto differences = tree_differences(root);
  if (!differences.empty())
    return line + "; but the tree differs from this binary's sources in " + std::to_string(differences.size()) +
           " file(s), first " + differences.front() + ": rebuild";
  if (checkout) {
    // Against the commit named, as provenance compares (on the GPU machine git's own HEAD is a
    // stale snapshot, and a status against it lists every file changed since).
    const TreeComparison c = compare_worktree(repo, commit, kSourceScope);
    if (!c.error.empty()) return line + "; the tree matches this binary, not compared with the commit: " + c.error;
    if (!c.changed.empty())
      return line + " with uncommitted changes in " + std::to_string(c.changed.size()) + " source file(s), as built";
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
