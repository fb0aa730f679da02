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

// A program left running while this process does other things (the workers of `kbench run
// --devices`, one per GPU), its stdout and stderr appended to a log file. It runs in a process
// group of its own, so that a Ctrl-C at the terminal reaches the parent alone, which passes one
// signal on (a second would end the child at once, core/interrupt.hpp). options.timeout_s and
// keep_stderr do not apply. Not copyable; the destructor neither waits nor kills.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const ProcessOptions& options, const std::filesystem::path& log);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  // Whether it has ended (without blocking); then exit_code() or end_signal() say how.
  bool finished();
  int exit_code() const { return exit_code_; }    // -1 unless it exited
  int end_signal() const { return end_signal_; }  // the signal that ended it, or 0
  void send_signal(int sig) const;

 private:
  int pid_ = -1;
  bool done_ = false;
  int exit_code_ = -1, end_signal_ = 0;
};

}  // namespace kbench
