// `kbench verify`: checks that every saved number can still be traced to its code.
//  - every *.json under results/ is a valid kbench/result/v1 file;
//  - every file its manifest lists as measured still hashes as recorded, and every record's op
//    is listed as measured (otherwise the result must move to archive/ with its sources);
//  - results under archive/<entry>/results/ match the copies under archive/<entry>/;
//  - every timing or bandwidth quoted in README.md and docs/**/*.md matches a saved figure of a
//    record that agrees with what its line names (op, dtype, shape, cache, timer).
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
  int result_files = 0;  // current and archived
  std::vector<VerifyProblem> problems;
};

VerifyReport verify_tree(const VerifyOptions& options);

// One line: "<file>: <what>; <fix>".
std::string format_problem(const VerifyProblem& problem);

}  // namespace kbench
