// kbench report --format csv: one row per record with the case, the statistics and the check;
// fields quoted where they must be and defused where a spreadsheet would run them; the filter
// applies; and the command writes the same rows for a fixture file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/run_command.hpp"
#include "record/result.hpp"
#include "report/csv.hpp"

namespace kbench {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

Record record(const std::string& variant, const std::string& timer, double median_us) {
  Record r;
  r.op = "gemm";
  r.variant = variant;
  r.dtype = "float16";
  r.shape = {4096, 4096, 4096};
  r.cache = "cold";
  r.timer = timer;
  r.samples_us = {median_us, median_us};
  r.median_us = r.q1_us = r.q3_us = r.min_us = median_us;
  r.tflops = 2.0 * 4096 * 4096 * 4096 / median_us / 1e6;
  r.params = {{"da", 1}, {"db", 0}};
  r.check.passed = true;
  return r;
}

TEST(ReportCsv, OneRowPerRecordWithTheCaseAndItsStatistics) {
  Result r;
  r.experiment = "sweep";
  r.device = {{"uuid", "GPU-1234"}, {"name", "NVIDIA H200"}};
  r.meta = {{"git", {{"commit", "abc123"}}}};
  r.records = {record("mma_128x256_fast", "graph", 310.12), record("cublas", "events", 167.5)};
  r.records[1].baseline = true;
  r.records[1].check.passed = false;
  r.records[1].sample_floor_us = {2.75, 3.25};  // two visits' floors: their median is their mean
  const auto lines = lines_of(records_csv({{"run.json", r}}, ReportFilter{}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("file,experiment,device,commit,op,variant,baseline,dtype,shape,params,cache,timer,", 0), 0u);
  EXPECT_EQ(lines[1],
            "run.json,sweep,GPU-1234,abc123,gemm,mma_128x256_fast,0,float16,4096x4096x4096,da=1;db=0,cold,graph,2,"
            "310.12,310.12,310.12,310.12,0,443.18,0,1,");  // no floor recorded: empty
  EXPECT_NE(lines[2].find(",cublas,1,"), std::string::npos) << lines[2];
  EXPECT_TRUE(lines[2].ends_with(",0,3")) << lines[2];  // the failed check, the floor

  ReportFilter graph_only;
  graph_only.timer = "graph";
  EXPECT_EQ(lines_of(records_csv({{"run.json", r}}, graph_only)).size(), 2u);
}

TEST(ReportCsv, FieldsAreQuotedAndNeverFormulas) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(csv_field("@sum"), "'@sum");
  EXPECT_EQ(csv_field("-1.5e-3"), "-1.5e-3");  // a negative number stays a number
  EXPECT_EQ(csv_field("-rf"), "'-rf");
}

TEST(ReportCsv, TheCommandWritesTheRows) {
  const auto dir = test::fresh_temp_dir();
  const std::string fixture = (std::filesystem::path(KBENCH_TEST_DATA) / "report" / "kbench_h200.json").string();
  const auto out = (dir / "records.csv").string();
  const test::CommandResult r = test::run_kbench("report " + test::shell_quoted(fixture) + " --format csv --out " +
                                                 test::shell_quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Result parsed = read_result(fixture);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(lines_of(text.str()).size(), parsed.records.size() + 1);
  const test::CommandResult bad = test::run_kbench("report " + test::shell_quoted(fixture) + " --format xml");
  EXPECT_EQ(bad.exit_code, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kbench
