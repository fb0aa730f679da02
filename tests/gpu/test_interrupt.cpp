// SIGINT in the middle of a run's visits: the run stops at the next visit boundary, writes what
// it measured (valid, whole, meta.incomplete saying how far it got), says so in one line and
// exits 130, as a process the signal ended. The kbench binary is run for real, with a sweep long
// enough (about 20 s of graph replays) that the signal, sent after 8 s, lands in its visits.
#include <gtest/gtest.h>

#include <filesystem>

#include "cpu/run_command.hpp"
#include "gpu_test.hpp"
#include "record/result.hpp"

namespace kbench {
namespace {

TEST(Interrupt, SigintWritesTheVisitsDoneMarkedIncomplete) {
  KB_REQUIRE_GPU();
  const auto out = test::fresh_temp_dir();
  const test::CommandResult r = test::run_command(
      "timeout --preserve-status -s INT 8 " + test::shell_quoted(KBENCH_BINARY) +
      " run --op copy --shape 2^20 --timer graph --cache warm --visits 1000 --samples 5 --no-roofline --out " +
      test::shell_quoted(out));
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_NE(r.err.find("marked incomplete"), std::string::npos) << r.err;
  ASSERT_TRUE(std::filesystem::exists(out / "sweep")) << r.err;
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(out / "sweep")) {
    ++files;
    const Result res = read_result(f.path());  // whole and valid
    ASSERT_TRUE(res.meta.contains("incomplete")) << f.path();
    const auto& inc = res.meta.at("incomplete");
    EXPECT_EQ(inc.at("signal"), "SIGINT");
    EXPECT_GT(inc.at("visits_done").get<int>(), 0);
    EXPECT_LT(inc.at("visits_done").get<int>(), inc.at("visits_planned").get<int>());
    EXPECT_FALSE(res.records.empty());
    for (const Record& rec : res.records) EXPECT_EQ(rec.samples_us.size() % 5, 0u);  // whole visits
  }
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace kbench
