// scripts/plot_sweep.py without matplotlib: --csv writes every checked record of the chosen
// cache mode and timer as a point (GB/s, or TFLOP/s where the op counts flops), leaves the copy
// roofline's own records out, and refuses a result that is not a sweep. Skipped when python3
// is not on PATH.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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
  const std::string csv = read_file(out);
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

// A record's same-traffic roofline goes into the CSV (and the plot) as its case's ceiling; the
// stream records that measured it are not points of their own.
TEST(PlotSweep, SameTrafficRooflineIsACeilingNotAPoint) {
  if (!have_python3()) GTEST_SKIP() << "python3 not on PATH";
  const auto dir = fresh_temp_dir();
  const auto result = dir / "sweep.json";
  std::ofstream(result) << R"({"experiment": "sweep", "records": [
    {"op": "softmax_backward", "variant": "auto", "baseline": false, "dtype": "float32", "shape": [4096, 4096],
     "cache": "cold", "timer": "cupti", "median_us": 45.0, "gbps": 4473.9, "flops": 0, "check": {"passed": true},
     "roofline": {"mix": "2:1", "elements": 16777216, "variant": "vec16", "gbps": 4437.5, "fraction": 1.008}},
    {"op": "stream", "variant": "vec16", "baseline": false, "dtype": "float32", "shape": [16777216],
     "params": {"reads": 2, "writes": 1}, "cache": "cold", "timer": "cupti", "median_us": 45.4, "gbps": 4437.5,
     "flops": 0, "check": {"passed": true}}]})";
  const auto out = dir / "points.csv";
  const CommandResult r = run_command("python3 " + shell_quoted(kScript) + " " + shell_quoted(result) +
                                      " --timer cupti --csv " + shell_quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_file(out);
  EXPECT_NE(csv.find("softmax_backward,float32,4096x4096,auto,0,4473.9,GB/s,4437.5\n"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("\nstream,"), std::string::npos) << csv;
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
