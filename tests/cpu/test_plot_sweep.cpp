// scripts/plot_sweep.py without matplotlib: --csv writes every checked record of the chosen
// cache mode and timer as a point (GB/s, or TFLOP/s where the op counts flops), leaves the copy
// roofline's own records out, and refuses a result that is not a sweep. Skipped when python3
// is not on PATH.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cpu/run_command.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using namespace kbench::test;

const fs::path kScript = fs::path(KBENCH_SOURCE_DIR) / "scripts" / "plot_sweep.py";
const fs::path kFixtures = fs::path(KBENCH_TEST_DATA) / "report";

bool have_python3() { return std::system("command -v python3 >/dev/null 2>&1") == 0; }

TEST(PlotSweep, CsvHasAPointPerCheckedRecord) {
  if (!have_python3()) GTEST_SKIP() << "python3 not on PATH";
  const auto dir = fresh_temp_dir();
  const auto out = dir / "points.csv";
  const CommandResult r = run_command("python3 " + shell_quoted(kScript) + " " +
                                      shell_quoted(kFixtures / "kbench_h200.json") +
                                      " --cache cold --timer events --csv " + shell_quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  const std::string csv = text.str();
  EXPECT_EQ(csv.rfind("op,dtype,case,variant,baseline,rate,unit,same_traffic_gbps\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("gemm,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",TFLOP/s"), std::string::npos) << csv;
  EXPECT_NE(csv.find("softmax,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",GB/s"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("\ncopy,"), std::string::npos) << "the roofline is drawn, not plotted as a point\n" << csv;

  const CommandResult none = run_command("python3 " + shell_quoted(kScript) + " " +
                                         shell_quoted(kFixtures / "kbench_h200.json") +
                                         " --timer graph --csv " + shell_quoted(out));
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("no checked records"), std::string::npos) << none.err;
  fs::remove_all(dir);
}

TEST(PlotSweep, RefusesAResultThatIsNotASweep) {
  if (!have_python3()) GTEST_SKIP() << "python3 not on PATH";
  const auto dir = fresh_temp_dir();
  const auto grid = dir / "grid.json";
  std::ofstream(grid) << R"({"experiment": "grid", "records": []})";
  const CommandResult r = run_command("python3 " + shell_quoted(kScript) + " " + shell_quoted(grid) + " --csv " +
                                      shell_quoted(dir / "x.csv"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("is not a sweep result"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kbench
