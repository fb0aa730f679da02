// A throwaway git repository in a temporary folder, for the provenance and verify tests. Made
// with `git init` by each test and never committed anywhere; the user's git configuration is
// kept out so that a signing or hook setting cannot change what the tests see.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/subprocess.hpp"
#include "core/text.hpp"
#include "record_temp_dir.hpp"

namespace kbench::test {

class GitFixture {
 public:
  GitFixture() { git({"init", "-q"}); }

  const std::filesystem::path& path() const { return tree_.path(); }
  std::filesystem::path write(const std::filesystem::path& relative,
                              const std::string& content) const {
    return tree_.write(relative, content);
  }

  // git -C <tree> <args> with a fixed identity; the test fails when git does.
  std::string git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"git", "-C", path().string(), "-c", "user.name=kbench test",
                                     "-c", "user.email=test@kbench.invalid", "-c",
                                     "commit.gpgsign=false"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions options;
    options.env = {{"GIT_CONFIG_GLOBAL", "/dev/null"}, {"GIT_CONFIG_NOSYSTEM", "1"}};
    options.keep_stderr = true;
    const ProcessResult r = run_process(argv, options);
    EXPECT_TRUE(r.ok()) << "git " << args.front() << ": " << r.err;
    return r.out;
  }

  // Commits everything in the tree; returns the new commit's full hex.
  std::string commit(const std::string& message = "c") const {
    git({"add", "-A"});
    git({"commit", "-q", "--allow-empty", "-m", message});
    return trim(git({"rev-parse", "HEAD"}));
  }

 private:
  TempDir tree_;
};

}  // namespace kbench::test
