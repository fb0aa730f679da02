// scripts/ncu_crosscheck.py on synthetic inputs: ncu's CSV (one row per kernel and metric,
// after ncu's own ==PROF== lines), kbench check's lines and a result with cupti records. It
// pairs two launches per check line, passes within the allowed difference and fails beyond it
// or when the launches do not pair up. Skipped when python3 is not on PATH.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cpu/run_command.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kbench::test;

const fs::path kScript = fs::path(KBENCH_SOURCE_DIR) / "scripts" / "ncu_crosscheck.py";

bool have_python3() { return std::system("command -v python3 >/dev/null 2>&1") == 0; }

struct Inputs {
  // One folder per test: ctest runs the tests of this file in parallel processes.
  fs::path dir = fs::path(testing::TempDir()) /
                 (std::string("ncu_crosscheck_") + testing::UnitTest::GetInstance()->current_test_info()->name());
  Inputs(double second_kernel_us, int kernels) {
    fs::create_directories(dir);
    std::ofstream ncu(dir / "ncu.csv");
    ncu << "==PROF== Connected to process 1\n"
        << "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
    const double us[] = {100.0, 101.0, second_kernel_us, second_kernel_us};
    // The copy's times in microseconds, the softmax's as ncu 2025 writes them: nanoseconds
    // with thousands grouped ("50,500").
    for (int i = 0; i < kernels; ++i) {
      const long ns = std::lround(us[i] * 1000);
      const std::string value = i < 2 ? std::to_string(us[i])
                                      : std::to_string(ns / 1000) + "," + std::to_string(1000 + ns % 1000).substr(1);
      ncu << "\"" << i << "\",\"" << (i < 2 ? "copy_kernel(float*)" : "softmax_kernel(half*)")
          << "\",\"gpu__time_duration.sum\",\"" << (i < 2 ? "usecond" : "ns") << "\",\"" << value << "\"\n";
    }
    std::ofstream(dir / "check.log")
        << "ok   copy float32 67108864                             vec16          max_err 0 (allowed 0)\n"
        << "ok   softmax float16 8192x8192                         auto           max_err 1e-4 (allowed 1e-3)\n";
    std::ofstream(dir / "result.json") << R"({"records": [
        {"op": "copy", "dtype": "float32", "shape": [67108864], "variant": "vec16", "timer": "cupti", "cache": "cold", "median_us": 101.0},
        {"op": "copy", "dtype": "float32", "shape": [67108864], "variant": "vec16", "timer": "events", "cache": "cold", "median_us": 150.0},
        {"op": "softmax", "dtype": "float16", "shape": [8192, 8192], "variant": "auto", "timer": "cupti", "cache": "cold", "median_us": 50.0}]})";
  }
  // Two kernels here, so the count the issue asks (ten) is lowered unless a test says otherwise.
  CommandResult run(const std::string& flags = "--at-least 2") const {
    return run_command("python3 " + shell_quoted(kScript) + " --ncu " + shell_quoted(dir / "ncu.csv") + " --check " +
                       shell_quoted(dir / "check.log") + " --result " + shell_quoted(dir / "result.json") + " " + flags);
  }
};

TEST(NcuCrosscheck, PassesWithinTwoPercentAndFailsBeyond) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const CommandResult close = Inputs(50.5, 4).run();  // copy 101/100.5, softmax 50/50.5: under 1%
  EXPECT_EQ(close.exit_code, 0) << close.out << close.err;
  EXPECT_NE(close.out.find("| copy float32 67108864 | vec16 |"), std::string::npos) << close.out;
  const CommandResult far = Inputs(52.0, 4).run();  // softmax 50/52: 3.8% off
  EXPECT_EQ(far.exit_code, 1) << far.out << far.err;
  EXPECT_NE(far.out.find("worst difference 3.85%"), std::string::npos) << far.out;
}

TEST(NcuCrosscheck, JudgesOnlyKernelsOfTheLeastDurationAndCountsThem) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const Inputs far(52.0, 4);  // softmax 3.8% off, but under --min-us 60: listed, not judged
  const CommandResult above = far.run("--at-least 1 --min-us 60");
  EXPECT_EQ(above.exit_code, 0) << above.out << above.err;
  EXPECT_NE(above.out.find("not judged"), std::string::npos) << above.out;
  EXPECT_NE(above.out.find("over 1 kernels of 60 us or more"), std::string::npos) << above.out;
  const CommandResult too_few = far.run("--min-us 60");  // one judged, ten asked by default
  EXPECT_EQ(too_few.exit_code, 1) << too_few.out << too_few.err;
  // The offset column: the copy's ncu mean (100.5) less its cupti median (101.0).
  EXPECT_NE(above.out.find("| 100.50 | 101.00 | -0.50 |"), std::string::npos) << above.out;
}

// Two cases of one op, dtype and shape that differ only in their parameters (the sweep's
// stream rooflines: reads=2 writes=1 and reads=1 writes=1) pair with their own records: matched
// by op, dtype and shape alone, both took the first one's median (session 14's first check).
TEST(NcuCrosscheck, PairsCasesByTheirParametersToo) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const Inputs in(50.0, 4);
  std::ofstream(in.dir / "ncu.csv")
      << "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      << "\"0\",\"stream_kernel\",\"gpu__time_duration.sum\",\"usecond\",\"90.0\"\n"
      << "\"1\",\"stream_kernel\",\"gpu__time_duration.sum\",\"usecond\",\"90.0\"\n"
      << "\"2\",\"stream_kernel\",\"gpu__time_duration.sum\",\"usecond\",\"60.0\"\n"
      << "\"3\",\"stream_kernel\",\"gpu__time_duration.sum\",\"usecond\",\"60.0\"\n";
  std::ofstream(in.dir / "check.log")
      << "ok   stream float32 1024 reads=2 writes=1          vec16          max_err 0 (allowed 0)\n"
      << "ok   stream float32 1024 reads=1 writes=1          vec16          max_err 0 (allowed 0)\n";
  std::ofstream(in.dir / "result.json") << R"({"records": [
      {"op": "stream", "dtype": "float32", "shape": [1024], "params": {"reads": 1.0, "writes": 1.0}, "variant": "vec16", "timer": "cupti", "cache": "cold", "median_us": 60.0},
      {"op": "stream", "dtype": "float32", "shape": [1024], "params": {"reads": 2.0, "writes": 1.0}, "variant": "vec16", "timer": "cupti", "cache": "cold", "median_us": 90.0}]})";
  const CommandResult r = in.run();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("worst difference 0.00%"), std::string::npos) << r.out;
}

TEST(NcuCrosscheck, RefusesLaunchesThatDoNotPairWithTheChecks) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const CommandResult r = Inputs(50.5, 3).run();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("3 kernels profiled for 2 checks"), std::string::npos) << r.err;
}

}  // namespace
