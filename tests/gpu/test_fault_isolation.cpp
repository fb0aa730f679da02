// Fault isolation (issue 19; cli/workers.hpp), end to end on the GPU: `kbench run --isolate`
// with the test hook KBENCH_TEST_FAULTS=1 (kernels/test_faults/test_faults.cu), which adds two
// variants to add: fault_address (an illegal address: the worker's CUDA context is lost) and
// fault_spin (a kernel that never ends: the step deadline kills the worker). The run must record
// both as faulted with their errors, time every other variant, write one whole result, exit 1
// (as for a failed check) and leave nothing else on disk (the worker folder in TMPDIR removed).
// And SIGINT to an isolated run reaches its worker: the result is written marked incomplete.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cpu/run_command.hpp"
#include "gpu_test.hpp"
#include "record/result.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

// Starts kbench with `args`, TMPDIR set to `tmp` (where its worker folder goes) and the given
// extra variables; its stdout and stderr go to `log`. Returns its pid.
pid_t start_kbench(const std::vector<std::string>& args, const fs::path& tmp, const fs::path& log,
                   const std::vector<std::pair<std::string, std::string>>& env) {
  const pid_t pid = fork();
  if (pid == 0) {
    ::setenv("TMPDIR", tmp.c_str(), 1);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    if (!std::freopen(log.c_str(), "w", stdout)) _exit(127);
    dup2(STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(KBENCH_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(KBENCH_BINARY, argv.data());
    _exit(127);
  }
  return pid;
}

int exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!it->is_directory()) files.push_back(it->path());
  return files;
}

TEST(FaultIsolation, FaultingVariantsAreRecordedAndTheRunGoesOn) {
  KB_REQUIRE_GPU();
  const fs::path work = test::fresh_temp_dir(), out = work / "out", tmp = work / "tmp", log = work / "log";
  fs::create_directories(out);
  fs::create_directories(tmp);
  // The deadline: far above any healthy step here (the longest, preparing the 2^28-element copy
  // case, takes a few seconds), so that only fault_spin passes it.
  const pid_t pid = start_kbench({"run", "--isolate", "--unit-timeout", "30", "--op", "add", "--dtype", "float32",
                                  "--shape", "2^20", "--visits", "2", "--samples", "2", "--out", out.string()},
                                 tmp, log, {{"KBENCH_TEST_FAULTS", "1"}});
  const int code = exit_status(pid);
  const std::string said = test::read_file(log);
  EXPECT_EQ(code, 1) << said;
  EXPECT_NE(said.find("2 variant(s) faulted and were not timed"), std::string::npos) << said;
  // The end-of-run output lists both as failed, after the tables.
  for (const char* v : {"fault_address", "fault_spin"}) {
    const std::string line = std::string("FAILED (fault in its check step): add ") + v + " float32 1048576: ";
    EXPECT_NE(said.find(line), std::string::npos) << v << "\n" << said;
  }

  // One whole result, and nothing else: no temporary file beside it, no worker folder left.
  const std::vector<fs::path> written = files_under(out);
  ASSERT_EQ(written.size(), 1u) << said;
  EXPECT_EQ(written[0].parent_path(), out / "sweep");
  EXPECT_EQ(written[0].extension(), ".json");
  EXPECT_TRUE(files_under(tmp).empty()) << said;
  EXPECT_TRUE(fs::is_empty(tmp)) << said;

  const Result r = read_result(written[0]);  // checked against result.schema.json
  std::set<std::string> timed;
  for (const Record& rec : r.records)
    if (rec.op == "add") timed.insert(rec.variant);
  EXPECT_EQ(timed, std::set<std::string>({"scalar", "vec16", "tiled", "cub"}));
  ASSERT_TRUE(r.extra.contains("faults")) << said;
  const nlohmann::json& faults = r.extra.at("faults");
  ASSERT_EQ(faults.size(), 2u) << faults.dump(2);
  EXPECT_EQ(faults[0].at("variant"), "fault_address");
  EXPECT_EQ(faults[0].at("phase"), "check");
  EXPECT_NE(faults[0].at("error").get<std::string>().find("illegal"), std::string::npos) << faults.dump(2);
  EXPECT_EQ(faults[1].at("variant"), "fault_spin");
  EXPECT_NE(faults[1].at("error").get<std::string>().find("ran past the 30 s step deadline"), std::string::npos)
      << faults.dump(2);
  for (const auto& f : faults) {
    EXPECT_EQ(f.at("op"), "add");
    EXPECT_EQ(f.at("dtype"), "float32");
    EXPECT_EQ(f.at("shape"), nlohmann::json({1048576}));
  }
  const nlohmann::json& worker = r.meta.at("merge").at("workers").at(0);
  EXPECT_EQ(worker.at("attempts"), 3);
  EXPECT_EQ(worker.at("faults"), 2);
  fs::remove_all(work);
}

TEST(FaultIsolation, SigintReachesTheIsolatedWorker) {
  KB_REQUIRE_GPU();
  const fs::path work = test::fresh_temp_dir(), out = work / "out", tmp = work / "tmp", log = work / "log";
  fs::create_directories(out);
  fs::create_directories(tmp);
  const pid_t pid = start_kbench({"run", "--isolate", "--op", "copy", "--shape", "2^20", "--timer", "graph", "--cache",
                                  "warm", "--visits", "2000", "--samples", "5", "--no-roofline", "--out", out.string()},
                                 tmp, log, {});
  // The signal goes once the worker reports its first visit (its steps file, in the worker folder
  // under TMPDIR): then it is timing, and what it measured is written.
  bool visiting = false;
  for (int i = 0; i < 1200 && !visiting; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const fs::path& f : files_under(tmp))
      if (f.extension() == ".steps" && test::read_file(f).find("\"phase\":\"visit\"") != std::string::npos) visiting = true;
  }
  ASSERT_TRUE(visiting) << test::read_file(log);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  const int code = exit_status(pid);
  const std::string said = test::read_file(log);
  EXPECT_EQ(code, 130) << said;
  const std::vector<fs::path> written = files_under(out);
  ASSERT_EQ(written.size(), 1u) << said;
  const Result r = read_result(written[0]);
  ASSERT_TRUE(r.meta.contains("incomplete")) << said;
  EXPECT_GT(r.meta.at("incomplete").at("visits_done").get<int>(), 0);
  EXPECT_FALSE(r.records.empty());
  EXPECT_TRUE(fs::is_empty(tmp)) << said;
  fs::remove_all(work);
}

}  // namespace
}  // namespace kbench
