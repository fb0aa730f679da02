#include "core/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace kbench {
namespace {

// The pipe's two ends, closed on destruction (each at most once).
struct Pipe {
  int fd[2] = {-1, -1};
  bool open() { return ::pipe2(fd, O_CLOEXEC) == 0; }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
};

std::vector<std::string> environment_with(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string::npos && extra.count(entry.substr(0, eq))) continue;
    env.push_back(entry);
  }
  for (const auto& [key, value] : extra) env.push_back(key + "=" + value);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argument vector");
  ProcessResult result;
  Pipe out, err;
  if (!out.open() || !err.open()) return result;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string stdin_path = options.stdin_file.empty() ? "/dev/null" : options.stdin_file.string();
  posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  if (options.keep_stderr) posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  else posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());

  std::vector<std::string> args = argv;
  std::vector<std::string> env = environment_with(options.env);
  std::vector<char*> c_args = c_strings(args), c_env = c_strings(env);
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, c_args[0], &actions, nullptr, c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  out.close_end(1);
  err.close_end(1);
  if (spawned != 0) return result;

  // Read both pipes until both close, so a child that fills one cannot block on it.
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(options.timeout_s);
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_pipes = 2;
  char buf[65536];
  while (open_pipes > 0) {
    int wait_ms = -1;
    if (options.timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) {
        result.timed_out = true;
        ::kill(pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left);
    }
    const int ready = ::poll(fds, 2, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_pipes;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.started = true;
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const ProcessOptions& options,
                           const std::filesystem::path& log) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess: empty argument vector");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string stdin_path = options.stdin_file.empty() ? "/dev/null" : options.stdin_file.string();
  posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  // This process may run with SIGINT and SIGTERM handled or blocked; the child starts with the
  // default actions and nothing blocked, so that it installs its own handlers on a clean slate.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> args = argv;
  std::vector<std::string> env = environment_with(options.env);
  std::vector<char*> c_args = c_strings(args), c_env = c_strings(env);
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, c_args[0], &actions, &attributes, c_args.data(), c_env.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == 0) pid_ = pid;
}

bool ChildProcess::finished() {
  if (done_ || pid_ <= 0) return true;
  int status = 0;
  pid_t got = 0;
  while ((got = ::waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (got == 0) return false;
  done_ = true;
  if (got > 0 && WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
  if (got > 0 && WIFSIGNALED(status)) end_signal_ = WTERMSIG(status);
  return true;
}

void ChildProcess::send_signal(int sig) const {
  if (pid_ > 0 && !done_) ::kill(pid_, sig);
}

}  // namespace kbench
