// `kbench verify`: checks that every saved number can still be traced to its code.
//  - every *.json under results/ and archive/ is a valid kbench/result/v1 file, its records
//    match its integrity digest (when it has one), and each record's median, quartiles and
//    minimum are the statistics of its raw samples;
//  - every file its manifest lists as measured hashes as recorded, in the current tree or, where
//    the tree has moved on, at the result's commit (plus its recorded diff) in git's history;
//  - archive/ holds only result JSON, as archive/<experiment>/<file>.json;
//  - every timing or bandwidth quoted in README.md and docs/**/*.md matches a saved figure
//    (record/verify_docs.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kbench {

struct VerifyOptions {
  std::filesystem::path root;                      // the source tree
  std::vector<std::filesystem::path> result_dirs;  // current results; empty: <root>/results
};

struct VerifyProblem {
  std::string file;  // relative to the root where possible; docs add ":<line>"
  std::string what;  // what is wrong
  std::string fix;   // what to do about it
};

struct VerifyReport {
  int result_files = 0;             // current and archived
  int traced_through_history = 0;   // results whose sources are no longer today's, found in git
  std::vector<VerifyProblem> problems;
  // Lines that are not problems: how many results could not be traced for want of history.
  std::vector<std::string> notes;
};

VerifyReport verify_tree(const VerifyOptions& options);

// One line: "<file>: <what>; <fix>".
std::string format_problem(const VerifyProblem& problem);

// `p` relative to `root` when it lies under it, so that messages paste into a shell there.
std::string display_path(const std::filesystem::path& root, const std::filesystem::path& p);

}  // namespace kbench
