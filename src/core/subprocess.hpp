// Running another program (git, gzip) from an argument vector: no shell, so no quoting,
// no injection through a path or an id, and the exit status is the program's own.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

struct ProcessOptions {
  std::filesystem::path cwd;                    // empty: this process's
  std::filesystem::path stdin_file;             // empty: /dev/null
  std::map<std::string, std::string> env;       // added to (or replacing in) this environment
  double timeout_s = 0;                         // > 0: killed (SIGKILL) after this long
  bool keep_stderr = false;                     // false: the child's stderr goes to /dev/null
};

struct ProcessResult {
  bool started = false;   // false: the program could not be run at all (not found, no fork)
  bool timed_out = false;
  int exit_code = -1;     // the program's exit status; -1 when it did not exit normally
  std::string out;        // everything it wrote to stdout
  std::string err;        // its stderr, when keep_stderr
  bool ok() const { return started && !timed_out && exit_code == 0; }
};

// Runs argv[0] (looked up on PATH) with argv[1...], waits for it and returns what it wrote.
// Never throws for the child's failure; throws std::invalid_argument for an empty argv.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace kbench
