#include "record/provenance.hpp"

#include <unistd.h>

#include <fstream>

#include "core/text.hpp"
#include "record/git_history.hpp"
#include "record/sha256.hpp"

namespace kbench {
namespace {

using nlohmann::json;

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// dirty, changed, diff and diff_sha256 (or compare_error) of the tree against `commit`.
void add_comparison(json& git, const GitRepo& repo, const std::string& commit) {
  const TreeComparison c = compare_worktree(repo, commit, kSourceScope);
  if (!c.error.empty()) {
    git["dirty"] = true;  // not compared is not clean
    git["compare_error"] = c.error;
    return;
  }
  git["dirty"] = !c.changed.empty();
  git["changed"] = c.changed;
  if (c.changed.empty()) return;
  if (!is_valid_utf8(c.diff)) {
    // A source in another encoding: JSON cannot hold its diff as text, and an altered diff
    // would rebuild other files than ran. Dirty without a diff, and the reason.
    git["diff_error"] = "the diff is not UTF-8 text, so a JSON string cannot hold it";
    return;
  }
  git["diff"] = c.diff;
  git["diff_sha256"] = sha256_hex(c.diff);
}

json git_block(const std::filesystem::path& root) {
  const GitRepo repo(root);
  const bool checkout = repo.is_checkout();
  const auto head = checkout ? repo.resolve_commit("HEAD") : std::nullopt;
  const auto marker = marker_commit(root);
  // The marker names the commit as written; where this repository has it, as its full hex.
  const auto marked = marker ? repo.resolve_commit(*marker).value_or(*marker) : std::string();
  json git;
  if (marker && (!head || marked != *head)) {
    git = {{"commit", marked}, {"source", ".kbench-git-commit"}};
    if (head) {
      // What git alone would have said, kept beside the marker's view.
      const TreeComparison at_head = compare_worktree(repo, *head, kSourceScope);
      git["git_head"] = *head;
      git["git_dirty"] = !at_head.error.empty() || !at_head.changed.empty();
    }
  } else if (head) {
    git = {{"commit", *head}, {"source", "git"}};
  } else {
    return {{"commit", "unknown"}, {"dirty", true}, {"source", "none"},
            {"compare_error", checkout ? "git has no HEAD commit and there is no .kbench-git-commit"
                                       : "not a git checkout and there is no .kbench-git-commit"}};
  }
  if (!checkout) {
    git["dirty"] = true;
    git["compare_error"] = "not a git checkout: the tree cannot be compared with the commit";
    return git;
  }
  add_comparison(git, repo, git["commit"].get<std::string>());
  return git;
}

}  // namespace

std::optional<std::string> marker_commit(const std::filesystem::path& root) {
  std::ifstream file(root / ".kbench-git-commit");
  std::string line;
  if (file && std::getline(file, line) && !trim(line).empty()) return trim(line);
  return std::nullopt;
}

json provenance(const std::filesystem::path& root) {
  return {{"host", hostname()}, {"git", git_block(root)}};
}

}  // namespace kbench
