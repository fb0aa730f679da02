// The grid and the fit on the CPU: the config and its cells, bad input, the analysis (regret
// per cell, mean, p95, cells off) and the fit's adoption test on small synthetic grids built
// by hand, and the report's sections. Nothing here runs a kernel.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "core/errors.hpp"
#include "device/device_limits.hpp"
#include "experiments/fit.hpp"
#include "experiments/grid.hpp"
#include "experiments/grid_analysis.hpp"
#include "grid_fixture.hpp"
#include "harness/prepare.hpp"
#include "kernels/rows/row_family.hpp"
#include "record_temp_dir.hpp"
#include "report/grid_report.hpp"
#include "report/report.hpp"
#include "run_command.hpp"

namespace kbench {
namespace {

using test::kH200;
using test::synthetic_grid;

GridSettings config() { return load_grid_config(std::filesystem::path(KBENCH_SOURCE_DIR) / "configs/grid.json"); }

TEST(GridConfig, TheDefaultGridCoversTheIssuesRange) {
  GridSettings s = config();
  s.op = "softmax";
  std::vector<std::string> left_out;
  const std::vector<GridCell> cells = grid_cells(s, kH200, &left_out);
  EXPECT_GE(cells.size(), 332u);
  EXPECT_EQ(left_out.size(), 6u);  // the largest cells above 2^28 elements
  const auto rows = grid_row_counts(s, kH200);
  EXPECT_EQ(rows.front(), 1);
  EXPECT_EQ(rows.back(), 8 * 132);
  bool odd = false, non_pow2 = false;
  for (const auto w : s.widths) {
    odd = odd || w % 2 == 1;
    non_pow2 = non_pow2 || (w & (w - 1)) != 0;
  }
  EXPECT_TRUE(odd && non_pow2);
  EXPECT_EQ(s.widths.front(), 64);
  EXPECT_EQ(s.widths.back(), 1 << 20);
  for (const GridCell& c : cells) {
    bool has_rule = false;
    for (const auto& p : c.plans) has_rule = has_rule || rows::grid_plan_name(p, rows::row_rules("softmax")) == c.rule;
    EXPECT_TRUE(has_rule) << c.rows << "x" << c.width << ": " << c.rule;
    // Large cells check a sample of rows (first and last among them); small ones every row.
    if (c.rows * c.width > s.check_full_up_to) {
      EXPECT_EQ(c.check_rows.size(), std::min<std::size_t>(64, c.rows)) << c.rows << "x" << c.width;
    } else {
      EXPECT_TRUE(c.check_rows.empty());
    }
  }
}

TEST(GridConfig, BadSettingsAreOneLineUsageErrors) {
  GridSettings s = config();
  EXPECT_THROW(validate_grid_settings(s), UsageError);  // no op chosen among five
  s.op = "add";
  EXPECT_THROW(validate_grid_settings(s), UsageError);  // not among the config's ops
  s.ops.clear();
  EXPECT_THROW(validate_grid_settings(s), UsageError);  // not a row op
  s.op = "softmax";
  EXPECT_NO_THROW(validate_grid_settings(s));
  s.caches = {"cold"};
  EXPECT_THROW(validate_grid_settings(s), UsageError);  // cold graph
  s.timers = {"events"};
  EXPECT_NO_THROW(validate_grid_settings(s));
  s.widths = {0};
  EXPECT_THROW(validate_grid_settings(s), UsageError);
  s = config();
  s.op = "softmax";
  s.max_elements = 1;  // a grid with no cells
  EXPECT_THROW(grid_cells(s, kH200, nullptr), UsageError);
}

// The message a grid config of `text` is refused with ("" when it is not).
std::string grid_config_error(const std::string& text) {
  test::TempDir dir;
  const auto file = dir.path() / "grid.json";
  std::ofstream(file) << text;
  try {
    GridSettings s = load_grid_config(file);
    s.op = "softmax";
    validate_grid_settings(s);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(GridConfig, IsReadAsStrictlyAsASweepConfig) {
  const std::string base = R"({"ops": ["softmax"], "rows": [4], "widths": [1024])";
  EXPECT_EQ(grid_config_error(base + "}"), "");
  const auto refused = [&](const std::string& more, const std::string& says) {
    const std::string err = grid_config_error(base + ", " + more + "}");
    EXPECT_NE(err.find(says), std::string::npos) << more << ": '" << err << "'";
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  };
  refused(R"("visit": 3)", "unknown key '/visit'");
  refused(R"("width": [64])", "unknown key '/width'");
  refused(R"("visits": 2.7)", "'/visits' must be a whole number from 1 to 100000, got 2.7");
  refused(R"("samples": 1000000)", "'/samples' must be a whole number from 1 to 100000");
  refused(R"("seed": -7)", "'/seed' must be a whole number");
  refused(R"("rows_per_sm": [0])", "'/rows_per_sm/0' must be a number above 0");
  refused(R"("check_sample_rows": 1)", "'/check_sample_rows' must be a whole number from 2");
  refused(R"("max_elements": 1000)", "no cells (the smallest, 4x1024, is above max_elements 1000)");
  refused(R"("cache": ["warm", "tepid"])", "'/cache' must be cold, warm or both, or a non-empty list of them, got [\"warm\",\"tepid\"]");
  EXPECT_NE(grid_config_error(R"({"ops": ["softmax"], "rows": [2.5], "widths": [1024]})").find("'/rows/0' must be a row count: a whole number"),
            std::string::npos);
  EXPECT_NE(grid_config_error(R"({"ops": ["softmax"], "rows": [4], "widths": [1048577]})").find("'/widths/0' must be a width: a whole number from 1 to 1048576"),
            std::string::npos);
  EXPECT_NE(grid_config_error(R"({"ops": ["softmax", "add"], "rows": [4], "widths": [1024]})").find("'add', which is not a row op"),
            std::string::npos);
}

TEST(GridCheck, SampledRowsAreFixedDistinctAndHoldTheEnds) {
  const auto rows = sample_rows(1056, 64, 7);
  EXPECT_EQ(rows.size(), 64u);
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), 1055);
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  EXPECT_EQ(rows, sample_rows(1056, 64, 7));
  EXPECT_NE(rows, sample_rows(1056, 64, 8));
  EXPECT_EQ(sample_rows(5, 64, 7).size(), 5u);
}

const std::vector<std::int64_t> kRows = {1, 8, 33, 66, 99, 132, 528};
const std::vector<std::int64_t> kWidths = {1000, 4096, 32769, 131072};

TEST(GridAnalysis, RegretPerCellMeanP95AndCellsOff) {
  // The rule's plan takes 1.2x the best wherever it is not the best; a plan of its own where it is.
  const auto times = [](std::int64_t rows, std::int64_t width, const rows::RowPlan& p) {
    const std::string rule = rows::plan_name(rows::row_plan(rows, width, DType::bf16, kH200, rows::row_rules("softmax")));
    return rows::plan_name(p) == rule && width == 131072 ? 12.0 : 10.0 + (rows::plan_name(p) == rule ? 0 : 1);
  };
  const Result r = synthetic_grid("softmax", kRows, kWidths, times, "t0");
  const nlohmann::json& a = r.extra["grid"]["analysis"];
  EXPECT_EQ(a["cells"], 28);
  const int wide = static_cast<int>(kRows.size());  // the 131072-wide cells: 12 against 11 us
  EXPECT_EQ(a["cells_off"], 0);
  EXPECT_NEAR(a["mean_regret"].get<double>(), wide * (12.0 / 11 - 1) / 28, 1e-9);
  EXPECT_NEAR(a["p95_regret"].get<double>(), 12.0 / 11 - 1, 1e-9);
  EXPECT_EQ(a["per_cell"].size(), 28u);
  const std::string md = grid_markdown(a);
  EXPECT_NE(md.find("mean regret 2.3%"), std::string::npos) << md;
  EXPECT_NE(md.find("| bfloat16 | 528 | 131072 |"), std::string::npos);
}

TEST(GridAnalysis, AFailedPlanIsLeftOutAndAResultWithoutCellsIsRefused) {
  Result r = synthetic_grid("row_sum", {4}, {4096}, [](auto, auto, const auto&) { return 5.0; }, "t0");
  for (auto& rec : r.records) rec.check.passed = false;
  EXPECT_THROW(grid_analysis(r), UsageError);
  r.experiment = "sweep";
  EXPECT_THROW(grid_data(r), UsageError);
}

// The fit tests run on softmax, whose rule loops 66-131 rows of 32769 elements (it splits rows
// below all the SMs only past 65536): the synthetic runs below make splitting them pay, so a
// better rule exists (one that splits them, by either threshold), whatever the op's other
// thresholds are today.
const char* const kFitOp = "softmax";

// Whether thresholds `t` (a fit's JSON) split rows of the SM count's lower half to all of it at
// 32769 elements.
bool splits_99x32769(const nlohmann::json& t) {
  rows::RowRules r = rows::row_rules(kFitOp);
  r.split_below_divisor = t.at("split_below_divisor");
  r.split_above_width = t.at("split_above_width");
  r.split_all_sms_above_width = t.at("split_all_sms_above_width");
  return rows::row_plan(99, 32769, DType::bf16, kH200Limits, r).kind == rows::RowKind::split;
}

// Split wins by far for every row count below the SM count, where the current rule (split below
// half the SMs) loops: a better rule exists. A resident row past 8192 elements (32769 in
// bfloat16 is 4096 whole vectors, which a block of 1024 holds) costs what looping does.
double split_wins(std::int64_t rows, std::int64_t width, const rows::RowPlan& p, double jitter) {
  const double base = 10.0 + jitter;
  if (p.kind == rows::RowKind::split) return rows < 132 ? base : 2 * base;
  if (p.kind == rows::RowKind::looped || width > 8192) return width > 8192 && rows < 132 ? 1.5 * base : base + 0.1;
  return base;
}

TEST(Fit, ABetterRuleIsAdoptedWhenItWinsOnTheHeldOutRun) {
  ASSERT_FALSE(splits_99x32769(to_json(params_of(rows::row_rules(kFitOp)))));
  const Result a = synthetic_grid(kFitOp, kRows, kWidths, [](auto r, auto w, const auto& p) { return split_wins(r, w, p, 0); }, "t0");
  const Result b = synthetic_grid(kFitOp, kRows, kWidths, [](auto r, auto w, const auto& p) { return split_wins(r, w, p, 0.05); }, "t1");
  const nlohmann::json f = fit_grids(a, b, "A", "B");
  EXPECT_TRUE(f["decision"]["adopt"].get<bool>()) << f.dump(1);
  EXPECT_TRUE(splits_99x32769(f["decision"]["thresholds"])) << f["decision"]["thresholds"].dump();
  // Looping 66 and 99 rows of 32769 (1.5x the split) in 28 cells: 2 x 0.5 / 28 = 3.6%.
  EXPECT_NEAR(f["current"]["a"]["mean_regret"].get<double>(), 1.0 / 28, 1e-9);
  EXPECT_LT(f["decision"]["held_out"]["mean_regret"].get<double>(), 0.01);
  EXPECT_TRUE(f["a_to_b"]["beats_current_by_more_than_noise"].get<bool>());
  EXPECT_TRUE(f["b_to_a"]["beats_current_by_more_than_noise"].get<bool>());
  const std::string md = fit_markdown(f);
  EXPECT_NE(md.find("Decision: adopt"), std::string::npos) << md;
}

// The grids are bfloat16: softmax's float32-only threshold (eight_vectors_above) changes no
// regret there, and neither do thresholds of plans its cells never reach. The fit changes only
// what its data sees: from the current thresholds to the adopted ones, the split thresholds.
TEST(Fit, ThresholdsTheGridCannotSeeKeepTheirCurrentValues) {
  const Result a = synthetic_grid(kFitOp, kRows, kWidths, [](auto r, auto w, const auto& p) { return split_wins(r, w, p, 0); }, "t0");
  const Result b = synthetic_grid(kFitOp, kRows, kWidths, [](auto r, auto w, const auto& p) { return split_wins(r, w, p, 0.05); }, "t1");
  const nlohmann::json f = fit_grids(a, b, "A", "B");
  const nlohmann::json now = to_json(params_of(rows::row_rules(kFitOp))), fitted = f["decision"]["thresholds"];
  EXPECT_EQ(fitted["eight_vectors_above"], now["eight_vectors_above"]) << fitted.dump();
  EXPECT_EQ(fitted["warp_max_vecs"], now["warp_max_vecs"]) << fitted.dump();
  int changed = 0;
  for (const auto& [name, value] : fitted.items()) changed += value != now[name];
  EXPECT_GE(changed, 1);
  EXPECT_LE(changed, 2) << "only the split thresholds: " << fitted.dump() << " from " << now.dump();
}

TEST(Fit, AGainWithinTheRunsOwnDifferenceIsRefused) {
  // Run A favours the split plan a little where the rule loops; run B the other way by more.
  const auto run = [](double split_factor) {
    return [split_factor](std::int64_t rows, std::int64_t width, const rows::RowPlan& p) {
      if (p.kind == rows::RowKind::split) return rows < 132 ? 10.0 * split_factor : 20.0;
      return width > 8192 && rows < 132 && p.kind == rows::RowKind::looped && p.chunk != 8192 ? 10.5 : 10.0;
    };
  };
  ASSERT_FALSE(splits_99x32769(to_json(params_of(rows::row_rules(kFitOp)))));
  const Result a = synthetic_grid(kFitOp, kRows, kWidths, run(0.99), "t0");
  const Result b = synthetic_grid(kFitOp, kRows, kWidths, run(1.03), "t1");
  const nlohmann::json f = fit_grids(a, b, "A", "B");
  EXPECT_FALSE(f["decision"]["adopt"].get<bool>()) << f.dump(1);
  EXPECT_EQ(f["decision"]["thresholds"], f["current"]["thresholds"]);
  EXPECT_NE(fit_markdown(f).find("keep the current rule"), std::string::npos);
}

TEST(Fit, MismatchedGridsAreRefused) {
  const auto flat = [](auto, auto, const auto&) { return 10.0; };
  const Result a = synthetic_grid("softmax", kRows, kWidths, flat, "t0");
  EXPECT_THROW(fit_grids(a, synthetic_grid("softmax", kRows, kWidths, flat, "t1", "NVIDIA A100"), "A", "B"), UsageError);
  EXPECT_THROW(fit_grids(a, synthetic_grid("row_sum", kRows, kWidths, flat, "t1"), "A", "B"), UsageError);
  EXPECT_THROW(fit_grids(a, synthetic_grid("softmax", {1, 8}, kWidths, flat, "t1"), "A", "B"), UsageError);
  EXPECT_THROW(fit_grids(a, a, "A", "A"), UsageError);  // the same run twice
  Result events = synthetic_grid("softmax", kRows, kWidths, flat, "t1");  // the same cells, another timer
  events.extra["grid"]["timer"] = "events";
  for (auto& rec : events.records) rec.timer = "events";
  EXPECT_THROW(fit_grids(a, events, "A", "B"), UsageError);
  Result zero_sms = synthetic_grid("softmax", kRows, kWidths, flat, "t1");  // row_plan divides by the SMs
  zero_sms.extra["grid"]["device_limits"]["sms"] = 0;
  EXPECT_THROW(fit_grids(a, zero_sms, "A", "B"), UsageError);
}

TEST(Fit, TheCommandRefusesMismatchedFilesInOneLineAndWritesNothing) {
  test::TempDir dir;
  const auto flat = [](auto, auto, const auto&) { return 10.0; };
  const auto a = write_result(synthetic_grid("softmax", kRows, kWidths, flat, "t0"), dir.path());
  const auto b = write_result(synthetic_grid("rmsnorm", kRows, kWidths, flat, "t1"), dir.path());
  const auto out = dir.path() / "out";
  const test::CommandResult o =
      test::run_kbench("fit " + a.string() + " " + b.string() + " --out " + out.string());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(test::line_count(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("different ops"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Fit, TheCommandWritesAFitResultThatTheReportReads) {
  test::TempDir dir;
  const auto a = write_result(synthetic_grid(kFitOp, kRows, kWidths, [](auto r, auto w, const auto& p) { return split_wins(r, w, p, 0); }, "t0"), dir.path());
  const auto b = write_result(synthetic_grid(kFitOp, kRows, kWidths, [](auto r, auto w, const auto& p) { return split_wins(r, w, p, 0.05); }, "t1"), dir.path());
  const auto out = dir.path() / "out";
  const test::CommandResult o = test::run_kbench("fit " + a.string() + " " + b.string() + " --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("Decision: adopt"), std::string::npos) << o.out;
  ASSERT_TRUE(std::filesystem::exists(out / "fit"));
  const auto file = std::filesystem::directory_iterator(out / "fit")->path();
  // The decision on stdout, the log line naming the file on stderr.
  EXPECT_EQ(o.out.find("wrote "), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("] info wrote " + file.string()), std::string::npos) << o.err;
  const Result fit = read_result(file);
  EXPECT_EQ(fit.experiment, "fit");
  const std::string md = build_report({{file.string(), fit}, {a.string(), read_result(a)}}, ReportFilter{});
  EXPECT_NE(md.find(std::string("## fit: ") + kFitOp), std::string::npos) << md;
  EXPECT_NE(md.find(std::string("## grid: ") + kFitOp), std::string::npos) << md;
}

TEST(GridCli, BadInputIsOneLineAndExit2) {
  const test::CommandResult o = test::run_kbench("grid --op add");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(test::line_count(o.err), 1) << o.err;
  const test::CommandResult none = test::run_kbench("grid --op softmax --config /nonexistent/grid.json");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("cannot read config"), std::string::npos);
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

// --hold keeps a threshold at its current value in every candidate; a name the fit does not
// search is refused in one line, before any work.
// --set holds a threshold at another value: the fitted rules carry it, the current rule to beat
// stays the compiled one, and bad values are one-line errors.
TEST(Fit, SetHoldsAThresholdAtAGivenValue) {
  const Result a = synthetic_grid(kFitOp, kRows, kWidths, [](auto r, auto w, const auto& p) { return split_wins(r, w, p, 0); }, "t0");
  const Result b = synthetic_grid(kFitOp, kRows, kWidths, [](auto r, auto w, const auto& p) { return split_wins(r, w, p, 0.05); }, "t1");
  const nlohmann::json now = to_json(params_of(rows::row_rules(kFitOp)));
  ASSERT_NE(now["warp_max_vecs"], 64);
  const nlohmann::json f = fit_grids(a, b, "A", "B", {}, parse_set_values({"warp_max_vecs=64"}));
  EXPECT_EQ(f["a_to_b"]["thresholds"]["warp_max_vecs"], 64) << f["a_to_b"].dump();
  EXPECT_EQ(f["b_to_a"]["thresholds"]["warp_max_vecs"], 64);
  EXPECT_EQ(f["current"]["thresholds"], now);
  EXPECT_EQ(f["set"]["warp_max_vecs"], 64);
  EXPECT_THROW(fit_grids(a, b, "A", "B", {"warp_max_vecs"}, parse_set_values({"warp_max_vecs=64"})), UsageError);
  for (const char* bad : {"warp_max_vecs", "warp_max=64", "warp_max_vecs=-1", "warp_max_vecs=1.5", "=3", "warp_max_vecs="})
    EXPECT_THROW(parse_set_values({bad}), UsageError) << bad;
  EXPECT_THROW(parse_set_values({"warp_max_vecs=64", "warp_max_vecs=32"}), UsageError);
  const test::CommandResult o = test::run_kbench("fit a.json b.json --set warp_max_vecs=lots");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(test::line_count(o.err), 1) << o.err;
}

TEST(Fit, HeldThresholdsKeepTheirCurrentValues) {
  const rows::RowRules& rules = rows::row_rules("softmax");
  const std::vector<RuleParams> all = rule_space(rules), held = rule_space(rules, {"warp_max_vecs"});
  EXPECT_LT(held.size(), all.size());
  EXPECT_EQ(held.front(), params_of(rules));
  for (const RuleParams& p : held) EXPECT_EQ(p.warp_max_vecs, rules.warp_max_vecs);
  EXPECT_THROW(rule_space(rules, {"warp_max"}), UsageError);
  const test::CommandResult o = test::run_kbench("fit a.json b.json --hold warp_max");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(test::line_count(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("--hold 'warp_max'"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace kbench
