// Running a program from a test: its exit code, stdout and stderr, kept apart. Shared by the
// tests that drive the real kbench binary or the PyTorch script.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kbench::test {

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Single-quoted for the shell (test paths hold no quotes).
inline std::string shell_quoted(const std::filesystem::path& path) {
  std::string quoted = "'";  // appended, not "'" + string: GCC 12 warns falsely on that
  quoted += path.string();
  return quoted += "'";
}

inline int line_count(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// An empty folder of its own under the test temp folder.
inline std::filesystem::path fresh_temp_dir() {
  static int counter = 0;
  const auto dir = std::filesystem::path(testing::TempDir()) /
                   ("kbench_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs `command` (a shell command line) with stdout and stderr captured in a fresh folder.
inline CommandResult run_command(const std::string& command) {
  const auto dir = fresh_temp_dir();
  const int status = std::system((command + " >" + shell_quoted(dir / "out") + " 2>" +
                                  shell_quoted(dir / "err") + " </dev/null").c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(dir / "out");
  result.err = read_file(dir / "err");
  std::filesystem::remove_all(dir);
  return result;
}

// The kbench binary this build made, with `args`.
inline CommandResult run_kbench(const std::string& args) {
  return run_command(shell_quoted(KBENCH_BINARY) + " " + args);
}

}  // namespace kbench::test
