// `kbench run --format json|csv` on a GPU (issue 20): stdout is the records alone, parseable as
// they are, with the run's log (warm-up, phases, warnings, `wrote <file>`) on stderr. Each is
// held to `kbench report --format json|csv` of the file the run wrote, which the CPU tests check
// against the result (tests/cpu/test_output_formats.cpp).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cpu/run_command.hpp"
#include "gpu_test.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

struct FormattedRun {
  test::CommandResult run, report;  // the run's output, and report's of the file it wrote
};

// A small run in `format`, -v so that debug lines are logged too, then `kbench report` of its file.
FormattedRun run_in(const std::string& format) {
  const fs::path out = test::fresh_temp_dir();
  FormattedRun f;
  f.run = test::run_kbench("-v run --format " + format + " --out " + test::shell_quoted(out) +
                           " --op add --dtype float32 --shape 2^20 --visits 3 --samples 3");
  const fs::path dir = out / "sweep";
  if (f.run.exit_code == 0 && fs::is_directory(dir)) {
    const fs::path file = fs::directory_iterator(dir)->path();
    EXPECT_NE(f.run.err.find("wrote " + file.string()), std::string::npos) << f.run.err;
    f.report = test::run_kbench("report --format " + format + " " + test::shell_quoted(file));
  }
  fs::remove_all(out);
  return f;
}

TEST(RunFormats, JsonOnStdoutParsesAndIsTheReportsOfTheFileWritten) {
  KB_REQUIRE_GPU();
  const FormattedRun f = run_in("json");
  ASSERT_EQ(f.run.exit_code, 0) << f.run.err;
  ASSERT_EQ(f.report.exit_code, 0) << f.report.err;
  nlohmann::json records;
  ASSERT_NO_THROW(records = nlohmann::json::parse(f.run.out)) << f.run.out;
  EXPECT_EQ(records["schema"], "kbench/records/v1");
  EXPECT_FALSE(records["records"].empty());
  EXPECT_EQ(records, nlohmann::json::parse(f.report.out));
  EXPECT_NE(f.run.err.find("] info warm-up: "), std::string::npos) << "the log is on stderr: " << f.run.err;
}

TEST(RunFormats, CsvOnStdoutIsTheReportsOfTheFileWritten) {
  KB_REQUIRE_GPU();
  const FormattedRun f = run_in("csv");
  ASSERT_EQ(f.run.exit_code, 0) << f.run.err;
  ASSERT_EQ(f.report.exit_code, 0) << f.report.err;
  EXPECT_GT(test::line_count(f.run.out), 1) << f.run.out;  // the header and a row at least
  EXPECT_EQ(f.run.out, f.report.out);
}

}  // namespace
}  // namespace kbench
