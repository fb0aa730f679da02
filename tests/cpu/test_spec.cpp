// kbench spec without a GPU: the compile-time plans of its width build against row_plan, which
// builds can run which cases, its analysis and report on a small synthetic result, and its bad
// input (one line, exit 2, nothing written).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/errors.hpp"
#include "cpu/run_command.hpp"
#include "experiments/spec.hpp"
#include "experiments/spec_analysis.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/spec/spec_builds.hpp"
#include "kernels/rows/spec/spec_shape.hpp"
#include "report/report.hpp"

namespace kbench {
namespace {

namespace spec = rows::spec;

const spec::SpecRules& spec_rules(const std::string& op) {
  return op == "softmax" ? spec::kSoftmaxSpecRules : spec::kRmsnormSpecRules;
}

// The rules the spec kernels restate are the registered ops' own.
TEST(SpecShape, RestatedRulesAreTheOpsRules) {
  for (const auto& op : spec::spec_ops()) {
    const rows::RowRules& r = rows::row_rules(op);
    const spec::SpecRules& s = spec_rules(op);
    EXPECT_EQ(s.max_threads(4), r.max_threads(4)) << op;
    EXPECT_EQ(s.max_threads(8), r.max_threads(8)) << op;
    EXPECT_EQ(s.eight_vectors_f32, r.block_eight_vectors_f32) << op;
    EXPECT_EQ(r.eight_vectors_above, 0) << op << ": block_shape assumes 8 vectors from the first block plan";
  }
}

// The width build is instantiated with block_shape's plan; the launchers run row_plan's.
TEST(SpecShape, WidthBuildPlansAreRowPlans) {
  for (const auto& op : spec::spec_ops())
    for (DType d : kAllDTypes)
      for (int w : spec::kSpecWidths) {
        const rows::RowRules& rules = rows::row_rules(op);
        const spec::BlockShape s = spec::block_shape(w, static_cast<int>(dtype_size(d)), spec_rules(op));
        const std::string where = op + " " + std::string(dtype_name(d)) + " width " + std::to_string(w);
        if (!rows::plan_unsupported(rows::Forced::resident_any, w, d, rules).empty()) {
          EXPECT_EQ(s.vecs, 0) << where;
          continue;
        }
        const rows::RowPlan p = rows::forced_plan(rows::Forced::resident_any, 4096, w, d, DeviceLimits{}, rules);
        EXPECT_EQ(s.vecs, p.vecs) << where;
        EXPECT_EQ(s.lanes, p.lanes) << where;
        EXPECT_EQ(p.threads, p.lanes) << where;
      }
  // Spot values: softmax float32 4097 holds 8 vectors in 128 threads (1024 whole vectors and a
  // scalar; counted as 1025 vectors it took 256 threads, half their slots empty); rmsnorm
  // float32 8200 has no resident plan (2050 vectors > 4 x 512).
  EXPECT_EQ(spec::block_shape(4097, 4, spec::kSoftmaxSpecRules).vecs, 8);
  EXPECT_EQ(spec::block_shape(4097, 4, spec::kSoftmaxSpecRules).lanes, 128);
  EXPECT_EQ(spec::block_shape(8200, 4, spec::kRmsnormSpecRules).vecs, 0);
}

Case spec_case(const std::string& op, DType d, std::int64_t rows, std::int64_t cols) {
  return make_case(registry().op(op), d, {rows, cols});
}

TEST(SpecBuilds, WhichBuildsRunWhichCases) {
  using spec::Build;
  const Case ok = spec_case("softmax", DType::f16, 4096, 4097);
  for (Build b : spec::kBuilds) EXPECT_EQ(spec::build_unsupported(ok, b), "") << spec::build_name(b);
  const Case odd = spec_case("softmax", DType::f32, 4096, 5000);
  EXPECT_EQ(spec::build_unsupported(odd, Build::template_vecs), "");
  EXPECT_NE(spec::build_unsupported(odd, Build::template_width).find("no width build for width 5000"),
            std::string::npos);
  const Case too_wide = spec_case("rmsnorm", DType::f32, 4096, 8200);
  for (Build b : spec::kBuilds)
    EXPECT_NE(spec::build_unsupported(too_wide, b).find("no resident plan"), std::string::npos);
  const Case narrow = spec_case("softmax", DType::f32, 8, 100);  // a warp plan
  EXPECT_NE(spec::build_unsupported(narrow, Build::runtime).find("block plans"), std::string::npos);
  EXPECT_THROW(spec::build_launchable("add", Build::runtime), std::invalid_argument);
  EXPECT_EQ(spec::build_launchable("rmsnorm", Build::template_width).name, "template_width");
}

TEST(SpecSettings, BadInputIsAUsageError) {
  SpecSettings s;
  EXPECT_NO_THROW(validate_spec_settings(s));
  s.ops = {"add"};
  EXPECT_THROW(validate_spec_settings(s), UsageError);
  s.ops = {"softmax"};
  s.shapes = {{8, 100}};
  EXPECT_THROW(validate_spec_settings(s), UsageError);  // no build runs a warp plan
  s.shapes = {{4096}};
  EXPECT_THROW(validate_spec_settings(s), UsageError);  // rank
  s = SpecSettings{};
  s.threshold = 0;
  EXPECT_THROW(validate_spec_settings(s), UsageError);
}

// A build's record: `us[v]` per visit v, two samples each.
Record build_record(const std::string& op, const std::string& build, const std::vector<std::int64_t>& shape,
                    const std::vector<double>& us) {
  Record r;
  r.op = op;
  r.variant = build;
  r.dtype = "float32";
  r.shape = shape;
  r.cache = "cold";
  r.timer = "graph";
  for (std::size_t v = 0; v < us.size(); ++v)
    for (int k = 0; k < 2; ++k) {
      r.samples_us.push_back(us[v] * (1 + 0.001 * k));
      r.sample_visits.push_back(static_cast<int>(v));
    }
  r.median_us = us[us.size() / 2];
  return r;
}

nlohmann::json attrs(const std::string& op, const std::string& build, const std::vector<std::int64_t>& shape,
                     int regs, int local, int blocks) {
  return {{"op", op},         {"dtype", "float32"}, {"shape", shape},        {"build", build},
          {"registers", regs}, {"local_bytes", local}, {"shared_bytes", 128}, {"blocks_per_sm", blocks},
          {"threads", 256},   {"kernel", build}};
}

// softmax 4096x4097: the width build 2x the runtime's speed with fewer registers and twice the
// blocks; the vecs build 1.25x with the same attributes as the runtime build. 4096x4096: all
// within 1%. rmsnorm 4096x4104: the width build 10% slower than the vecs build, spilling.
Result synthetic_spec_result() {
  Result r;
  r.experiment = "spec";
  const std::vector<double> ten(7, 10.0);
  std::vector<double> noisy = {10.0, 10.05, 9.98, 10.02, 10.01, 9.99, 10.03};
  const std::vector<std::int64_t> odd = {4096, 4097}, even = {4096, 4096}, rms = {4096, 4104};
  r.records = {build_record("softmax", "runtime", odd, std::vector<double>(7, 10.0)),
               build_record("softmax", "template_vecs", odd, std::vector<double>(7, 8.0)),
               build_record("softmax", "template_width", odd, std::vector<double>(7, 5.0)),
               build_record("softmax", "runtime", even, ten),
               build_record("softmax", "template_vecs", even, noisy),
               build_record("softmax", "template_width", even, ten),
               build_record("rmsnorm", "template_vecs", rms, ten),
               build_record("rmsnorm", "template_width", rms, std::vector<double>(7, 11.0))};
  r.extra["spec"]["kernels"] = nlohmann::json::array(
      {attrs("softmax", "runtime", odd, 40, 0, 2), attrs("softmax", "template_vecs", odd, 40, 0, 2),
       attrs("softmax", "template_width", odd, 32, 0, 4), attrs("rmsnorm", "template_vecs", rms, 64, 0, 2),
       attrs("rmsnorm", "template_width", rms, 128, 96, 1)});
  return r;
}

const nlohmann::json& comparison(const nlohmann::json& a, const std::vector<std::int64_t>& shape,
                                 const std::string& build, const std::string& against) {
  for (const auto& cell : a["cells"])
    if (cell["shape"] == shape)
      for (const auto& c : cell["comparisons"])
        if (c["build"] == build && c["against"] == against) return c;
  static const nlohmann::json none;
  return none;
}

TEST(SpecAnalysis, VerdictsFollowThePerVisitRatiosAndTheThreshold) {
  const auto a = analyse_spec_result(synthetic_spec_result(), 0.03);
  EXPECT_EQ(a["threshold"].get<double>(), 0.03);
  ASSERT_EQ(a["cells"].size(), 3u);
  const auto& width_rt = comparison(a, {4096, 4097}, "template_width", "runtime");
  EXPECT_NEAR(width_rt["speedup"].get<double>(), 2.0, 1e-9);
  EXPECT_EQ(width_rt["verdict"], "pays");
  EXPECT_EQ(width_rt["visits"], 7);
  EXPECT_EQ(comparison(a, {4096, 4097}, "template_vecs", "runtime")["verdict"], "pays");
  EXPECT_NEAR(comparison(a, {4096, 4097}, "template_width", "template_vecs")["speedup"].get<double>(), 1.6, 1e-9);
  EXPECT_EQ(comparison(a, {4096, 4096}, "template_vecs", "runtime")["verdict"], "even");
  EXPECT_EQ(comparison(a, {4096, 4104}, "template_width", "template_vecs")["verdict"], "costs");
  // No runtime record at rmsnorm 4096x4104: no comparison against it.
  EXPECT_TRUE(comparison(a, {4096, 4104}, "template_width", "runtime").is_null());
  // The attributes sit beside each build's time.
  EXPECT_EQ(a["cells"][0]["builds"]["template_width"]["attributes"]["local_bytes"], 96);
}

TEST(SpecAnalysis, StatementsNameWhereItPaysAndTheAttributesThatDiffer) {
  const auto a = analyse_spec_result(synthetic_spec_result(), 0.03);
  ASSERT_EQ(a["statements"].size(), 2u);
  const std::string rms = a["statements"][0]["text"], soft = a["statements"][1]["text"];
  EXPECT_EQ(soft.rfind("softmax: ", 0), 0u) << soft;
  EXPECT_NE(soft.find("template_width against runtime: pays at float32 4096x4097 (2.00x; registers 40 -> 32, "
                      "blocks/SM 2 -> 4)"),
            std::string::npos)
      << soft;
  EXPECT_NE(soft.find("within 3% at float32 4096x4096"), std::string::npos) << soft;
  // The vecs build pays with the runtime build's attributes: said, not explained away.
  EXPECT_NE(soft.find("template_vecs against runtime: pays at float32 4096x4097 (1.25x; same registers"),
            std::string::npos)
      << soft;
  EXPECT_NE(soft.find("the attributes are the same, so registers, spills and occupancy do not explain it"),
            std::string::npos)
      << soft;
  EXPECT_NE(rms.find("template_width against template_vecs: costs at float32 4096x4104 (0.91x; registers 64 -> "
                     "128, local bytes 0 -> 96, blocks/SM 2 -> 1)"),
            std::string::npos)
      << rms;
}

TEST(SpecReport, ShowsBuildsAttributesComparisonsAndStatements) {
  Result r = synthetic_spec_result();
  r.extra["spec"]["analysis"] = analyse_spec_result(r, 0.03);
  const std::string md = build_report({{"spec.json", r}}, ReportFilter{});
  EXPECT_NE(md.find("## spec: compile-time specialisation"), std::string::npos) << md;
  EXPECT_NE(md.find("| 4096x4097 | float32 | cold | graph | 10.00 us, 40 regs, 0 B local, 2 blocks/SM |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2.00x pays |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.91x costs |"), std::string::npos) << md;
  EXPECT_NE(md.find("softmax: template_vecs against runtime"), std::string::npos) << md;
  EXPECT_NE(md.find("## softmax"), std::string::npos) << md;  // the records' own table too
}

// An op with no specialised build: one line, exit 2, no results folder, before any device.
TEST(SpecCli, AnOpWithoutSpecBuildsWritesNothing) {
  const auto dir = test::fresh_temp_dir();
  for (const std::string op : {"add", "row_sum", "softmax_backward", "nope"}) {
    const auto o = test::run_kbench("spec --op " + op + " --out " + test::shell_quoted(dir));
    EXPECT_EQ(o.exit_code, 2) << op << ": " << o.err;
    EXPECT_EQ(test::line_count(o.err), 1) << op << ": " << o.err;
    EXPECT_NE(o.err.find("has no specialised build"), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  const auto narrow = test::run_kbench("spec --op softmax --shape 8x100 --out " + test::shell_quoted(dir));
  EXPECT_EQ(narrow.exit_code, 2) << narrow.err;
  EXPECT_EQ(test::line_count(narrow.err), 1) << narrow.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "spec"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kbench
