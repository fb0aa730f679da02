// The runner's progress off a terminal (harness/progress.hpp), as a log or CI sees it: `kbench
// run` and `kbench check` with stderr in a pipe write one line per phase at its end, nothing
// redrawn, and nothing of it on stdout (the table).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "cpu/run_command.hpp"
#include "gpu_test.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

int matching_lines(const std::string& text, const std::regex& line) {
  int n = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) ++n;
  return n;
}

TEST(ProgressOffATerminal, RunLogsOneLinePerPhaseAndDrawsNothing) {
  KB_REQUIRE_GPU();
  const fs::path out = test::fresh_temp_dir();
  const test::CommandResult r = test::run_kbench("run --out " + test::shell_quoted(out) +
                                                 " --op add --dtype float32 --shape 2^20 --shape 2^22 --visits 3 --samples 3");
  fs::remove_all(out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::regex prepare(R"(preparing and checking: [1-9][0-9]* cases in [0-9]+\.[0-9] s \(inputs .*, [0-9]+ checks .*\)\n)");
  EXPECT_EQ(matching_lines(r.err, prepare), 1) << r.err;
  EXPECT_EQ(matching_lines(r.err, std::regex(R"(building timers: [1-9][0-9]* timers in [0-9]+\.[0-9] s\n)")), 1) << r.err;
  EXPECT_EQ(matching_lines(r.err, std::regex(R"(timing: [1-9][0-9]* visits in [0-9]+\.[0-9] s\n)")), 1) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "a line redrawn off a terminal";
  EXPECT_EQ(r.out.find("preparing"), std::string::npos) << "progress on stdout";
  EXPECT_EQ(r.out.find("timing:"), std::string::npos) << "progress on stdout";
}

TEST(ProgressOffATerminal, CheckLogsItsPhaseAndQuietLeavesItOut) {
  KB_REQUIRE_GPU();
  const test::CommandResult r = test::run_kbench("check --op add --shape 1048579");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(matching_lines(r.err, std::regex(R"(checking: [1-9][0-9]* cases in [0-9]+\.[0-9] s\n)")), 1) << r.err;
  const test::CommandResult quiet = test::run_kbench("--quiet check --op add --shape 1048579");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("checking:"), std::string::npos) << quiet.err;
}

}  // namespace
}  // namespace kbench
