// --format md|csv|json on list, run (the end-of-run table) and report (issue 20). `list --format
// json` is a contract the Python side reads: it must pass src/record/list.schema.json and carry
// the harness's own constants. No GPU: run's table is a function of a result in memory.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/json_schema.hpp"
#include "cpu/run_command.hpp"
#include "device/gpu_load.hpp"
#include "device/warmup.hpp"
#include "experiments/sweep_config.hpp"
#include "harness/l2_flush.hpp"
#include "harness/runner.hpp"
#include "kernels/all_ops.hpp"
#include "record/result.hpp"
#include "report/csv.hpp"
#include "report/run_table.hpp"

namespace kbench {
namespace {

using nlohmann::json;
const std::string kResult = std::string(KBENCH_TEST_DATA) + "/report/kbench_h200.json";

json list_json() {
  const test::CommandResult o = test::run_kbench("list --format json");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  return json::parse(o.out);
}

TEST(OutputFormats, ListJsonPassesItsSchema) {
  const json listing = list_json();
  EXPECT_NO_THROW(JsonSchema::embedded("src/record/list.schema.json").validate(listing, "kbench list"));
  // The schema can fail: a listing with a constant renamed does not pass.
  json renamed = listing;
  renamed["method"]["clock_threshold"] = renamed["method"]["clock_floor"];
  renamed["method"].erase("clock_floor");
  EXPECT_THROW(JsonSchema::embedded("src/record/list.schema.json").validate(renamed, "renamed"), UsageError);
}

// Every op and variant of the registry, in its order; a variant without dtypes says why.
TEST(OutputFormats, ListJsonHoldsTheRegistry) {
  const json listing = list_json();
  ASSERT_EQ(listing["ops"].size(), registry().ops().size());
  for (std::size_t i = 0; i < registry().ops().size(); ++i) {
    const Op& op = registry().ops()[i];
    const json& j = listing["ops"][i];
    EXPECT_EQ(j["name"], op.name);
    EXPECT_EQ(j["shape_rank"], op.shape_rank);
    const auto variants = registry().variants(op.name);
    ASSERT_EQ(j["variants"].size(), variants.size()) << op.name;
    for (std::size_t k = 0; k < variants.size(); ++k) {
      EXPECT_EQ(j["variants"][k]["name"], variants[k]->name);
      EXPECT_EQ(j["variants"][k]["dtypes"].empty(), j["variants"][k].contains("unavailable")) << variants[k]->name;
    }
  }
  // What the op families are known to take (docs/kernels.md): add in every dtype, the mma.sync
  // GEMM tiles in 16-bit dtypes only.
  EXPECT_EQ(listing["ops"][2]["name"], "add");
  EXPECT_EQ(listing["ops"][2]["variants"][0]["dtypes"], json({"float32", "float16", "bfloat16"}));
  bool mma_seen = false;
  for (const json& op : listing["ops"])
    for (const json& v : op["variants"])
      if (op["name"] == "gemm" && v["name"] == "mma_128x128") {
        mma_seen = true;
        EXPECT_EQ(v["dtypes"], json({"float16", "bfloat16"}));
      }
  EXPECT_TRUE(mma_seen);
}

// The constants are the harness's, not copies of them.
TEST(OutputFormats, ListJsonMethodConstantsAreTheHarnesss) {
  const json m = list_json()["method"];
  const SweepSettings defaults;
  EXPECT_EQ(m["visits"], defaults.visits);
  EXPECT_EQ(m["samples"], defaults.samples);
  EXPECT_EQ(m["seed"], defaults.seed);
  EXPECT_EQ(m["caches"], json(defaults.caches));
  EXPECT_EQ(m["timers"], json(defaults.timers));
  EXPECT_EQ(m["clock_floor"], kDefaultClockFloor);
  EXPECT_EQ(m["warmup_min_ms"], kWarmupMinMs);
  EXPECT_EQ(m["l2_flush_l2_multiple"], kFlushL2Multiple);
  EXPECT_EQ(m["l2_flush_min_bytes"], kFlushMinBytes);
  EXPECT_EQ(m["rotation_l2_multiple"], kRotationL2Multiple);
  EXPECT_EQ(m["graph_target_us"], kGraphTargetUs);
  EXPECT_EQ(m["graph_min_launches"], kMinGraphLaunches);
  EXPECT_EQ(m["graph_max_launches"], kMaxGraphLaunches);
  EXPECT_EQ(m["busy_utilization_pct"], kBusyUtilizationPct);
  EXPECT_EQ(m["max_visits_or_samples"], kMaxVisitsOrSamples);
  EXPECT_EQ(m["max_seed"], kMaxSeed);
}

TEST(OutputFormats, ListMarkdownAndCsv) {
  const test::CommandResult md = test::run_kbench("list");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(test::run_kbench("list --format md").out, md.out);
  std::size_t variants = 0;
  for (const Op& op : registry().ops()) {
    EXPECT_NE(md.out.find("## " + op.name + "\n"), std::string::npos) << op.name;
    variants += registry().variants(op.name).size();
  }
  EXPECT_NE(md.out.find("| clock_floor | 0.9 |"), std::string::npos) << md.out;
  const test::CommandResult csv = test::run_kbench("list --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("op,shape_rank,variant,baseline,dtypes,unavailable,summary\n", 0), 0u);
  EXPECT_EQ(static_cast<std::size_t>(test::line_count(csv.out)), variants + 1);
}

// run's markdown: one table per op, in the order of the first records, every line of a table as
// wide as its header (the columns fitted to their widest cell), and the columns explained.
TEST(OutputFormats, RunTableGroupsByOpAndFitsColumns) {
  const Result r = read_result(kResult);
  const std::string md = run_table(r, "md", kResult);
  std::set<std::string> ops;
  for (const Record& rec : r.records) ops.insert(rec.op);
  ASSERT_GE(ops.size(), 2u) << "the fixture should hold records of several ops";
  std::size_t tables = 0, rows = 0, width = 0;
  for (std::size_t start = 0; start < md.size();) {
    const std::size_t end = md.find('\n', start);
    const std::string line = md.substr(start, end - start);
    start = end + 1;
    if (line.rfind("### ", 0) == 0) {
      ++tables;
      EXPECT_TRUE(ops.count(line.substr(4))) << line;
      width = 0;
    } else if (line.rfind("|", 0) == 0) {
      if (width == 0) width = line.size();
      EXPECT_EQ(line.size(), width) << line;
      ++rows;
    }
  }
  EXPECT_EQ(tables, ops.size());
  EXPECT_EQ(rows, r.records.size() + 2 * ops.size());  // each table's header and rule
  EXPECT_NE(md.find("- roof%: GB/s as a percentage of the fastest stream kernel"), std::string::npos) << md;
}

TEST(OutputFormats, RunAndReportCsvAndJsonAgree) {
  const Result r = read_result(kResult);
  const std::string csv = run_table(r, "csv", kResult);
  EXPECT_EQ(csv, records_csv({{kResult, r}}, ReportFilter{}));
  const json j = json::parse(run_table(r, "json", kResult));
  EXPECT_EQ(j["schema"], "kbench/records/v1");
  ASSERT_EQ(j["records"].size(), r.records.size());
  EXPECT_EQ(static_cast<std::size_t>(test::line_count(csv)), r.records.size() + 1);
  EXPECT_EQ(j["records"][0]["op"], r.records[0].op);
  EXPECT_EQ(j["records"][0]["shape"], json(r.records[0].shape));
  EXPECT_EQ(j["records"][0]["median_us"], r.records[0].median_us);
  EXPECT_EQ(j["records"][0]["file"], kResult);

  const test::CommandResult report = test::run_kbench("report " + test::shell_quoted(kResult) + " --format json");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(json::parse(report.out), j);
}

// stdout is a command's product alone, every log line on stderr, so that `kbench run --format
// json > out.json` parses (issue 20). A dry run with the example plugin logs the plugin it loaded
// (info) and prints its plan: while spdlog's default logger wrote to stdout that line came first
// in the plan. (run's --format json itself needs a GPU: tests/gpu/test_run_formats.cpp.)
TEST(OutputFormats, StdoutIsTheProductAndTheLogGoesToStderr) {
  const test::CommandResult d = test::run_kbench("run --dry-run --op row_sum --dtype float32 --shape 64x1024 --plugin " +
                                                 test::shell_quoted(KBENCH_EXAMPLE_PLUGIN));
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out.rfind("dry run of experiment 'sweep'", 0), 0u) << d.out;
  EXPECT_EQ(d.out.find("] info "), std::string::npos) << d.out;
  EXPECT_NE(d.err.find("] info plugin row_sum_example ("), std::string::npos) << d.err;
  // A warning too: the default config has no row_sum case, and the plan says so on stderr.
  const test::CommandResult w = test::run_kbench("run --dry-run --plugin " + test::shell_quoted(KBENCH_EXAMPLE_PLUGIN));
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_EQ(w.out.rfind("dry run of experiment 'sweep'", 0), 0u) << w.out;
  EXPECT_EQ(w.out.find("runs in no case"), std::string::npos) << w.out;
  EXPECT_NE(w.err.find("] warning plugin.warp_per_row runs in no case of this plan"), std::string::npos) << w.err;
}

}  // namespace
}  // namespace kbench
