// The tolerance probe's result file without a GPU: its records and extra.tolerance built from a
// small ShareTable, their round trip through the result writer and reader, verify's view of
// the file, and kbench report of it, which must print the lines the probe prints.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "cpu/run_command.hpp"
#include "experiments/tolerance_shares.hpp"
#include "record/result.hpp"
#include "record_temp_dir.hpp"
#include "report/report.hpp"
#include "verify_fixture.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const double kInf = std::numeric_limits<double>::infinity();

// Three ops, one dtype each but softmax's two; an infinite share (a wrong NaN) on a baseline;
// an op with a parameter.
ShareTable small_table() {
  ShareTable t;
  t.add(ProbeCheck{"softmax", "auto", DType::f16, {3, 1000}, InputKind::random, 0, 0.2, "", false, 1e-4, 5e-4, {}});
  t.add(ProbeCheck{"softmax", "auto", DType::f16, {5, 8193}, InputKind::large, 1, 0.4, "", false, 2e-4, 5e-4, {}});
  t.add(ProbeCheck{"softmax", "looped", DType::f16, {2, 32769}, InputKind::spike, 2, 0.3, "", false, 1e-4, 3e-4, {}});
  t.add(ProbeCheck{"softmax", "auto", DType::f32, {7, 64}, InputKind::constant, 0, 0.1, "", false, 1e-7, 1e-6, {}});
  t.add(ProbeCheck{"row_sum", "cub", DType::bf16, {1, 1}, InputKind::cancelling, 4, kInf, "row 0: got nan", true,
                   std::numeric_limits<double>::quiet_NaN(), 0.01, {}});
  t.add(ProbeCheck{"rmsnorm", "fused", DType::f32, {3, 1000}, InputKind::random, 2, 0.05, "", false, 1e-6, 2e-5,
                   {{"eps", 1e-5}}});
  return t;
}

const json kSettings = {{"seeds", 3}, {"ops", json::array()}, {"seed", 1}};

// As the runner leaves it, less what needs a GPU: the records and extra.tolerance.
Result tolerance_result(const ShareTable& t) {
  Result r;
  r.experiment = "tolerance";
  r.meta = {{"argv", {"kbench", "check", "--tolerance-probe", "3"}}, {"seed", 1}, {"settings", kSettings}};
  r.device = {{"name", "NVIDIA H200"}, {"sms", 132}};
  r.manifest = {{"algorithm", "sha256"}, {"files", json::object()}, {"measured", json::object()}};
  r.records = share_records(t);
  r.extra["tolerance"] = share_extra(t, kSettings);
  return r;
}

TEST(ToleranceResult, OneUntimedRecordPerOpDtypeAndVariantWithItsWorstCheck) {
  const ShareTable t = small_table();
  const std::vector<Record> records = share_records(t);
  ASSERT_EQ(records.size(), t.rows().size());
  ASSERT_EQ(records.size(), 5u);
  for (const Record& r : records) {
    EXPECT_FALSE(is_timed(r));
    EXPECT_EQ(r.cache, kUntimed);
    EXPECT_TRUE(r.samples_us.empty());
    EXPECT_EQ(r.median_us, 0);
    ASSERT_TRUE(r.tolerance_probe.is_object());
  }
  const Record& softmax = records[0];  // the worst of its two checks: large, 5x8193, seed 1
  EXPECT_EQ(softmax.op, "softmax");
  EXPECT_EQ(softmax.variant, "auto");
  EXPECT_EQ(softmax.dtype, "float16");
  EXPECT_EQ(softmax.shape, (Shape{5, 8193}));
  EXPECT_TRUE(softmax.check.passed);
  EXPECT_EQ(softmax.check.max_err, 2e-4);
  EXPECT_EQ(softmax.tolerance_probe, (json{{"share", 0.4}, {"inputs", "large"}, {"seed", 1}, {"checks", 2}}));
  const Record& row_sum = records[3];
  EXPECT_TRUE(row_sum.baseline);
  EXPECT_FALSE(row_sum.check.passed);
  EXPECT_EQ(row_sum.check.detail, "row 0: got nan");
  EXPECT_TRUE(json::parse(to_json(row_sum).dump())["tolerance_probe"]["share"].is_null());  // JSON has no infinity
  EXPECT_EQ(records[4].params, (std::map<std::string, double>{{"eps", 1e-5}}));
}

TEST(ToleranceResult, ExtraHoldsTheSettingsAndTheWorstOfEachOpAndDtype) {
  const ShareTable t = small_table();
  const json extra = share_extra(t, kSettings);
  EXPECT_EQ(extra.at("settings"), kSettings);
  const json& worst = extra.at("worst");
  ASSERT_EQ(worst.size(), 4u);  // softmax float16 and float32, row_sum bfloat16, rmsnorm float32
  EXPECT_EQ(worst[0].at("op"), "softmax");
  EXPECT_EQ(worst[0].at("dtype"), "float16");
  EXPECT_EQ(worst[0].at("variant"), "auto");  // 0.4 against looped's 0.3
  EXPECT_EQ(worst[0].at("share"), 0.4);
  EXPECT_EQ(worst[0].at("inputs"), "large");
  EXPECT_EQ(worst[0].at("shape"), (json{5, 8193}));
  EXPECT_EQ(worst[0].at("seed"), 1);
  // Each entry's line is the report's per-op-and-dtype line, which follow its five row lines.
  const std::vector<std::string> lines = share_report(t);
  ASSERT_EQ(lines.size(), 9u);
  for (std::size_t i = 0; i < worst.size(); ++i) EXPECT_EQ(worst[i].at("line"), lines[5 + i]);
  EXPECT_EQ(worst[2].at("line"), "row_sum bfloat16: worst inf of its tolerance (cub, inputs=cancelling 1x1 seed 4)");
}

TEST(ToleranceResult, RoundTripsThroughTheWriterAndReaderWithTheSameTable) {
  test::TempDir dir;
  const ShareTable t = small_table();
  const Result written = tolerance_result(t);
  const fs::path file = write_result(written, dir.path() / "tolerance");
  EXPECT_EQ(file.parent_path().filename(), "tolerance");
  EXPECT_EQ(file.filename().string().rfind("tolerance-", 0), 0u) << file;
  const Result read = read_result(file);
  EXPECT_EQ(to_json(read).dump(), to_json(written).dump());
  EXPECT_EQ(read.recorded_digest, records_digest(read.records));
  EXPECT_EQ(read.extra.at("tolerance"), json::parse(to_json(written)["extra"]["tolerance"].dump()));
  // The lines from the file's records are the probe's, the infinite share (null) included.
  EXPECT_EQ(share_lines(share_rows_from_records(read.records)), share_report(t));
}

TEST(ToleranceResult, VerifyAcceptsTheFile) {
  test::VerifyFixture f;
  Result r = tolerance_result(small_table());
  r.meta["git"] = f.git_clean();
  r.manifest = f.result.manifest;  // every op measured with the fixture's two sources
  const json files = r.manifest["measured"]["add"];
  r.manifest["measured"] = {{"softmax", files}, {"row_sum", files}, {"rmsnorm", files}};
  f.rewrite_result(r);
  const VerifyReport report = f.verify();
  EXPECT_EQ(report.result_files, 1);
  EXPECT_TRUE(report.problems.empty()) << test::all_problems(report);
}

TEST(ToleranceResult, ReportPrintsTheProbesLines) {
  const ShareTable t = small_table();
  const std::string md = build_report({{"tol.json", tolerance_result(t)}}, ReportFilter{});
  EXPECT_NE(md.find("## tolerance probe"), std::string::npos) << md;
  EXPECT_NE(md.find("3 seeds of every input kind"), std::string::npos) << md;
  std::string block = "```\n";
  for (const std::string& line : share_report(t)) block += line + "\n";
  EXPECT_NE(md.find(block + "```\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("No records match"), std::string::npos) << md;  // no op tables of untimed records
  // A tolerance result without probe records says so rather than showing an empty block.
  Result empty = tolerance_result(ShareTable());
  EXPECT_NE(build_report({{"e.json", empty}}, ReportFilter{}).find("No tolerance probe records"), std::string::npos);
}

// The command: kbench report on the written file prints the same lines, exit 0.
TEST(ToleranceResult, ReportCommandOnTheFile) {
  test::TempDir dir;
  const ShareTable t = small_table();
  const fs::path file = write_result(tolerance_result(t), dir.path() / "tolerance");
  const test::CommandResult o = test::run_kbench("report " + test::shell_quoted(file));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const std::string& line : share_report(t)) EXPECT_NE(o.out.find(line + "\n"), std::string::npos) << line;
}

}  // namespace
}  // namespace kbench
