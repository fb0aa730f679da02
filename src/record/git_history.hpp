// The repository's history as the store of measured sources: what provenance compares a tree
// with and what verify rebuilds a result's files from. Every git call is an argument vector
// run by run_process (no shell), with --no-optional-locks; nothing here moves a ref or writes
// the repository's own index (comparisons use a temporary index; rebuilt files go to a scratch
// folder outside any repository).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

// What one git call gave: stdout when it exited 0, else the first line of what it said.
struct GitReply {
  bool ok = false;
  std::string out;
  std::string error;
};

class GitRepo {
 public:
  explicit GitRepo(std::filesystem::path root);

  // git --no-optional-locks <args> run in <root>, with `env` added to the environment and stdin
  // read from `stdin_file` (empty: /dev/null).
  GitReply run(const std::vector<std::string>& args,
               const std::map<std::string, std::string>& env = {},
               const std::filesystem::path& stdin_file = {}) const;

  // True when <root> is the top of a git work tree. A folder inside some other repository is
  // not: its paths would be compared with that repository's commits.
  bool is_checkout() const;
  bool is_shallow() const;
  // The full hex of the commit `rev` names, when its objects are in this repository.
  std::optional<std::string> resolve_commit(const std::string& rev) const;
  // The contents of `paths` at `commit` (one `git cat-file --batch`); a path the commit does
  // not hold as a file is absent from the map. Nothing when git fails.
  std::optional<std::map<std::string, std::string>> read_files(
      const std::string& commit, const std::vector<std::string>& paths) const;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

// The working tree's `scope` (folders and files relative to the root) against `commit`.
struct TreeComparison {
  std::string error;                 // empty when the comparison was made
  std::string diff;                  // the patch from the commit to the tree, "" when equal
  std::vector<std::string> changed;  // the paths that differ
};

// Reads the commit's tree into a temporary index, adds the scope from the working tree to it
// (`git add -A`) and diffs it against the commit: `git diff-index --cached -p --binary
// --full-index --no-renames`, plumbing that no user diff setting changes, so `git apply` can
// replay it on the commit's files exactly, binary files included.
TreeComparison compare_worktree(const GitRepo& repo, const std::string& commit,
                                const std::vector<std::string>& scope);

// `files` (path -> content, as at a commit) with `diff` applied, as far as it touches `paths`;
// returns the resulting contents of `paths` (a path the diff deletes is absent). git apply
// runs in a scratch folder outside any repository (GIT_CEILING_DIRECTORIES), so the
// repository is not involved. `error` says why the diff did not apply.
struct RebuiltFiles {
  std::string error;
  std::map<std::string, std::string> files;
};
RebuiltFiles apply_diff(const std::map<std::string, std::string>& files, const std::string& diff,
                        const std::vector<std::string>& paths);

}  // namespace kbench
