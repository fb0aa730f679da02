// kbench run --dry-run: the plan of a sweep, printed on a machine without a GPU (CI's), with
// the usual validation first, the filters honoured and nothing written. Runs the real binary
// from a fresh folder; the estimate's arithmetic is checked in-process.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/json_schema.hpp"
#include "cpu/run_command.hpp"
#include "device/device_limits.hpp"
#include "experiments/sweep.hpp"
#include "harness/dry_run.hpp"
#include "kernels/all_ops.hpp"
#include "record/manifest.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

struct DryRun {
  test::CommandResult result;
  bool wrote = false;  // anything under --out or the folder it ran in
};

DryRun dry_run(const std::string& args) {
  const fs::path cwd = test::fresh_temp_dir(), out = test::fresh_temp_dir();
  DryRun d;
  d.result = test::run_command("cd " + test::shell_quoted(cwd) + " && " + test::shell_quoted(KBENCH_BINARY) +
                               " run --dry-run --out " + test::shell_quoted(out) + " " + args);
  d.wrote = !fs::is_empty(cwd) || !fs::is_empty(out);
  fs::remove_all(cwd);
  fs::remove_all(out);
  return d;
}

std::string config(const char* name) { return test::shell_quoted(source_root() / "configs" / name); }

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

void expect_plan(const DryRun& d) {
  EXPECT_EQ(d.result.exit_code, 0) << d.result.err;
  EXPECT_FALSE(d.wrote);
  EXPECT_FALSE(has(d.result.err, "no CUDA device")) << d.result.err;
  // The limits say where they came from: the GPU when there is one, else the named default.
  EXPECT_TRUE(has(d.result.out, "device limits from GPU ") || has(d.result.out, "device limits from the H200 default"))
      << d.result.out;
  EXPECT_TRUE(has(d.result.out, "estimate (a rough model, not a measurement)")) << d.result.out;
  EXPECT_TRUE(has(d.result.out, "  model: ")) << d.result.out;
}

TEST(DryRun, QuickConfigListsItsCases) {
  const DryRun d = dry_run("--config " + config("quick.json"));
  expect_plan(d);
  const std::string& o = d.result.out;
  for (const char* c : {"copy float16 1048576 ", "copy float16 16777216 ", "add float16 1048576 ", "add float16 16777216 "})
    EXPECT_TRUE(has(o, c)) << c << "\n" << o;
  EXPECT_TRUE(has(o, " cold  events ")) << o;
  EXPECT_TRUE(has(o, " cold  graph ")) << o;
  EXPECT_TRUE(has(o, "3x3")) << o;
  EXPECT_FALSE(has(o, "copy float32 268435456")) << "the config has copy cases: no roofline added\n" << o;
}

// --format json: the plan as data, stdout nothing else (no log line, not even without --quiet),
// each case with every parameter and the registry's bytes and flops, the roofline cases included
// (kbench.plan leaves them out with --no-roofline), skips listed with the reason.
TEST(DryRun, JsonFormatIsThePlanAsData) {
  const DryRun d = dry_run("--config " + config("rows.json") + " --op softmax --format json --visits 4 --cache both");
  ASSERT_EQ(d.result.exit_code, 0) << d.result.err;
  EXPECT_FALSE(d.wrote);
  const nlohmann::json plan = nlohmann::json::parse(d.result.out);  // throws on anything but one JSON text
  EXPECT_EQ(plan.at("schema"), "kbench/plan/v1");
  const JsonSchema& schema = JsonSchema::embedded("src/record/plan.schema.json");
  EXPECT_NO_THROW(schema.validate(plan, "kbench run --dry-run --format json"));
  // The schema can fail: a plan whose case lost its bytes does not pass.
  nlohmann::json bytes_renamed = plan;
  bytes_renamed["cases"][0]["moved"] = bytes_renamed["cases"][0]["bytes"];
  bytes_renamed["cases"][0].erase("bytes");
  EXPECT_THROW(schema.validate(bytes_renamed, "renamed"), UsageError);
  EXPECT_EQ(plan.at("experiment"), "sweep");
  EXPECT_EQ(plan.at("visits"), 4);
  EXPECT_EQ(plan.at("cache"), nlohmann::json({"cold", "warm"}));
  bool roofline = false, skip = false;
  for (const nlohmann::json& got : plan.at("cases")) {
    const Op& op = registry().op(got.at("op").get<std::string>());
    const Case c = make_case(op, parse_dtype(got.at("dtype").get<std::string>()), got.at("shape").get<Shape>(),
                             got.at("params").get<std::map<std::string, double>>());
    SCOPED_TRACE(case_label(c));
    EXPECT_EQ((got.at("params").get<std::map<std::string, double>>()), c.params);
    EXPECT_EQ(got.at("bytes").get<double>(), op.bytes(c));
    EXPECT_EQ(got.at("flops").get<double>(), op.flops(c));
    EXPECT_FALSE(got.at("variants").empty());
    roofline = roofline || (c.op == "copy" && c.shape == Shape{268435456});
    for (const auto& why : got.at("skipped")) skip = skip || has(why.get<std::string>(), ": ");
  }
  EXPECT_TRUE(roofline) << "no copy among the cases: the 2^28 roofline copy is planned";
  EXPECT_TRUE(skip) << "a softmax plan cannot take every width";
  const DryRun bare = dry_run("--config " + config("rows.json") + " --op softmax --format json --no-roofline");
  ASSERT_EQ(bare.result.exit_code, 0) << bare.result.err;
  for (const nlohmann::json& got : nlohmann::json::parse(bare.result.out).at("cases"))
    EXPECT_NE(got.at("op"), "stream") << "--no-roofline: no same-traffic stream cases";
}

TEST(DryRun, RowsConfigListsCasesAndSkips) {
  const DryRun d = dry_run("--config " + config("rows.json"));
  expect_plan(d);
  const std::string& o = d.result.out;
  for (const char* c : {"row_sum bfloat16 4x32769 ", "softmax float32 64x131072 ", "softmax_backward float16 8192x8192 "})
    EXPECT_TRUE(has(o, c)) << c << "\n" << o;
  EXPECT_TRUE(has(o, "\n  skip softmax ")) << "a softmax plan cannot take every width\n" << o;
  EXPECT_TRUE(has(o, "7x5")) << o;
}

TEST(DryRun, FiltersNarrowThePlan) {
  const DryRun d = dry_run("--config " + config("rows.json") + " --op softmax --dtype float16 --shape 4096x4096");
  expect_plan(d);
  const std::string& o = d.result.out;
  EXPECT_TRUE(has(o, "softmax float16 4096x4096 ")) << o;
  EXPECT_FALSE(has(o, "row_sum")) << o;
  EXPECT_FALSE(has(o, "softmax float32")) << o;
  EXPECT_FALSE(has(o, "8192x8192")) << o;
  EXPECT_TRUE(has(o, "copy float32 268435456 ")) << "the roofline copy, as a real run adds it\n" << o;

  const DryRun one = dry_run("--op add --shape 2^20 --dtype float32 --variant vec16 --no-roofline --timer events");
  expect_plan(one);
  EXPECT_TRUE(has(one.result.out, "add float32 1048576 ")) << one.result.out;
  EXPECT_FALSE(has(one.result.out, "copy")) << one.result.out;
  EXPECT_FALSE(has(one.result.out, " cold  graph ")) << one.result.out;
  EXPECT_TRUE(has(one.result.out, "total: 1 unit(s), 9 timed samples")) << one.result.out;
}

// With a config the flags narrow its cases, each keeping its own variants: --dtype float32 on
// gemm.json runs the float32 case's tf32 variants, not the 16-bit case's list widened to float32.
TEST(DryRun, ConfigFiltersKeepEachCasesVariants) {
  const DryRun d = dry_run("--config " + config("gemm.json") + " --op gemm --dtype float32 --shape 4096x4096x4096");
  expect_plan(d);
  const std::string& o = d.result.out;
  EXPECT_TRUE(has(o, "tf32_128x256")) << o;
  EXPECT_TRUE(has(o, "cublas_best_tf32")) << o;
  EXPECT_FALSE(has(o, "skip gemm float32 4096x4096x4096 mma_")) << o;
  EXPECT_FALSE(has(o, "8192x8192x8192")) << o;

  const DryRun absent = dry_run("--config " + config("gemm.json") + " --op gemm --shape 333x333x333");
  EXPECT_EQ(absent.result.exit_code, 2) << absent.result.err;
  EXPECT_TRUE(has(absent.result.err, "shape '333x333x333' is not in config")) << absent.result.err;
}

TEST(DryRun, BadInputIsStillRefused) {
  for (const char* args : {"--config /nonexistent/kbench.json", "--op nosuchop --shape 8",
                           "--op add --shape 8 --cache tepid", "--op softmax --shape 1x2097153"}) {
    const DryRun d = dry_run(args);
    EXPECT_EQ(d.result.exit_code, 2) << args << ": " << d.result.err;
    EXPECT_EQ(test::line_count(d.result.err), 1) << args << ": " << d.result.err;
    EXPECT_TRUE(d.result.out.empty()) << args << ": " << d.result.out;
    EXPECT_FALSE(d.wrote) << args;
  }
}

TEST(DryRun, EstimateCountsEverySample) {
  SweepSettings s;
  s.cases = {CaseSpec{"add", {DType::f32}, {{1 << 20}, {1 << 24}}, {}}};
  s.caches = {"cold", "warm"};
  s.timers = {"events", "graph"};
  s.visits = 4;
  s.samples = 2;
  const Experiment e = sweep_experiment(s);  // add's two shapes and the roofline copy
  const PlanEstimate p = estimate_plan(e, kH200Limits);
  ASSERT_EQ(p.units.size(), e.cases.size() * 4);
  std::int64_t want = 0;
  for (const auto& mc : e.cases) want += 4 * 4 * 2 * static_cast<std::int64_t>(mc.variants.size());
  EXPECT_EQ(p.timed_samples, want);
  EXPECT_GT(p.preparation_s, 0);
  EXPECT_GT(p.timing_s, 0);
  EXPECT_GT(p.fixed_s, 0.6);  // two warm-ups of 300 ms at least
  // More data, more time: the larger add takes longer per sample in each cache mode and timer.
  EXPECT_LT(p.units[0].timing_s, p.units[4].timing_s);
  EXPECT_DOUBLE_EQ(p.total_s(), p.preparation_s + p.fixed_s + p.timing_s);
}

}  // namespace
}  // namespace kbench
