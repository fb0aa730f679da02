// SIGINT in the middle of a run's visits: the run stops at the next visit boundary, writes what
// it measured (valid, whole, meta.incomplete saying how far it got), says so in one line and
// exits 130, as a process the signal ended. The kbench binary runs for real; the test reads its
// log and sends the signal 4 s after the warm-up line (the visits follow the warm-up and a floor
// measurement of about a second), into a sweep whose visits would take about a minute.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "cpu/run_command.hpp"
#include "gpu_test.hpp"
#include "record/result.hpp"

namespace kbench {
namespace {

struct Finished {
  int status = -1;
  std::string log;
  bool signalled = false;
  std::string signal_state;  // the process's Sig* lines of /proc/<pid>/status as the signal went
};

// Which signals a process blocks, ignores and catches (hex masks; SIGINT is bit 1, SIGTERM 14):
// when a signal goes unanswered, these say whether it was blocked, ignored or handled.
std::string signal_state(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line, out;
  while (std::getline(status, line))
    if (line.rfind("Sig", 0) == 0 || line.rfind("ShdPnd", 0) == 0) out += line + "\n";
  return out;
}

// Runs kbench with `args` (no shell), its stdout and stderr read line by line together (the cue,
// a log line, is on stderr since main's log_to_stderr; while spdlog wrote to stdout, reading
// stderr alone the cue never came, on the H200 at ee2b825 and 8321555); SIGINT goes to it
// `delay` after the first line containing `cue`.
Finished run_and_interrupt(const std::vector<std::string>& args, const std::string& cue, std::chrono::seconds delay) {
  int pipe_fd[2];
  if (pipe(pipe_fd) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fd[1], STDOUT_FILENO);
    dup2(pipe_fd[1], STDERR_FILENO);
    close(pipe_fd[0]);
    close(pipe_fd[1]);
    std::vector<char*> argv{const_cast<char*>(KBENCH_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(KBENCH_BINARY, argv.data());
    _exit(127);
  }
  close(pipe_fd[1]);
  Finished f;
  FILE* err = fdopen(pipe_fd[0], "r");
  char line[4096];
  bool sent = false;
  std::thread interrupter;
  while (std::fgets(line, sizeof line, err)) {
    f.log += line;
    if (!sent && f.log.find(cue) != std::string::npos) {
      sent = true;
      interrupter = std::thread([pid, delay, &f] {
        std::this_thread::sleep_for(delay);
        f.signal_state = signal_state(pid);
        f.signalled = kill(pid, SIGINT) == 0;
      });
    }
  }
  std::fclose(err);
  if (interrupter.joinable()) interrupter.join();
  waitpid(pid, &f.status, 0);
  return f;
}

TEST(Interrupt, SigintWritesTheVisitsDoneMarkedIncomplete) {
  KB_REQUIRE_GPU();
  const auto out = test::fresh_temp_dir();
  const Finished f = run_and_interrupt({"run", "--op", "copy", "--shape", "2^20", "--timer", "graph", "--cache", "warm",
                                        "--visits", "2000", "--samples", "5", "--no-roofline", "--out", out.string()},
                                       "timing begins:", std::chrono::seconds(2));
  ASSERT_TRUE(WIFEXITED(f.status)) << f.log;
  ASSERT_TRUE(f.signalled) << "no signal was sent (the cue never came, or the run had ended)\n" << f.log;
  EXPECT_EQ(WEXITSTATUS(f.status), 130) << f.log << "signal state when SIGINT went:\n" << f.signal_state;
  EXPECT_NE(f.log.find("marked incomplete"), std::string::npos) << f.log;
  ASSERT_TRUE(std::filesystem::exists(out / "sweep")) << f.log;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out / "sweep")) {
    ++files;
    const Result res = read_result(entry.path());  // whole and valid
    ASSERT_TRUE(res.meta.contains("incomplete")) << entry.path();
    const auto& inc = res.meta.at("incomplete");
    EXPECT_EQ(inc.at("signal"), "SIGINT");
    EXPECT_GT(inc.at("visits_done").get<int>(), 0) << f.log;
    EXPECT_LT(inc.at("visits_done").get<int>(), inc.at("visits_planned").get<int>());
    EXPECT_FALSE(res.records.empty());
    for (const Record& rec : res.records) EXPECT_EQ(rec.samples_us.size() % 5, 0u);  // whole visits
  }
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace kbench
