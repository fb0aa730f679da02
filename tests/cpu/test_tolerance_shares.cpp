// The tolerance probe's arithmetic without a GPU: an output's worst error as a share of its
// tolerance (compare_output's Scan::share, on synthetic outputs and references), the worst per
// op, dtype and variant (ShareTable) and its report, and the probe's plan from the registry.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "experiments/tolerance_probe.hpp"
#include "harness/compare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/gemm/gemm_kernels.hpp"

namespace kbench {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(ToleranceShare, IsTheWorstErrorOverTheAllowedError) {
  const Tolerance tol{0.0, 0.1, ""};
  // Allowed 0.1 and 0.2: shares 0.5 and 0.25.
  const Scan s = compare_output(std::vector<double>{1.05, 1.95}, std::vector<double>{1.0, 2.0}, tol);
  EXPECT_EQ(s.bad, -1);
  EXPECT_NEAR(s.share, 0.5, 1e-12);
  // The absolute term counts too: |0.003 - 0| against 0.01 + 0.
  EXPECT_NEAR(compare_output(std::vector<double>{0.003}, std::vector<double>{0.0}, Tolerance{0.01, 0.5, ""}).share,
              0.3, 1e-12);
}

TEST(ToleranceShare, CountsEveryElementPastTheFirstFailure) {
  const Tolerance tol{1.0, 0.0, ""};
  const Scan s = compare_output(std::vector<double>{2.0, 0.0, 10.0}, std::vector<double>{0.0, 0.0, 0.0}, tol);
  EXPECT_EQ(s.bad, 0);  // the first failure, as check_variant reports it
  EXPECT_EQ(s.share, 10.0);
}

TEST(ToleranceShare, NonNumbersAndExactTolerances) {
  const Tolerance exact{0.0, 0.0, ""};
  EXPECT_EQ(compare_output(std::vector<double>{1.5}, std::vector<double>{1.5}, exact).share, 0.0);
  EXPECT_EQ(compare_output(std::vector<double>{1.5}, std::vector<double>{1.25}, exact).share, kInf);
  const Tolerance tol{1e-3, 1e-3, ""};
  EXPECT_EQ(compare_output(std::vector<double>{kNaN}, std::vector<double>{1.0}, tol).share, kInf);
  EXPECT_EQ(compare_output(std::vector<double>{kNaN, kInf}, std::vector<double>{kNaN, kInf}, tol).share, 0.0);
  EXPECT_EQ(compare_output(std::vector<double>{1.0}, std::vector<double>{kNaN}, tol).share, kInf);
  EXPECT_EQ(compare_output(std::vector<double>{-kInf}, std::vector<double>{kInf}, tol).share, kInf);
  EXPECT_EQ(compare_output(std::vector<double>{}, std::vector<double>{}, tol).share, 0.0);
}

// Several pieces of the parallel scan: the worst share sits in the last one, a failure in the first.
TEST(ToleranceShare, SameAcrossThePiecesOfAParallelScan) {
  const std::size_t n = 3 * static_cast<std::size_t>(kParallelGrain) + 7;
  std::vector<double> ref(n, 1.0), got(n, 1.0);
  got[5] = 1.5;
  got[n - 2] = 4.0;
  const Scan s = compare_output(got, ref, Tolerance{0.0, 0.25, ""});
  EXPECT_EQ(s.bad, 5);
  EXPECT_EQ(s.share, 12.0);
  got[5] = 1.0;
  got[n - 2] = 1.2;
  EXPECT_NEAR(compare_output(got, ref, Tolerance{0.0, 0.25, ""}).share, 0.8, 1e-12);
}

ProbeCheck check(const char* op, const char* variant, DType dt, InputKind kind, int seed, double share) {
  return ProbeCheck{op, variant, dt, {3, 1000}, kind, seed, share, "", false, 0, 0, {}};
}

TEST(ShareTable, KeepsTheWorstOfEachOpDtypeAndVariant) {
  ShareTable t;
  t.add(check("softmax", "auto", DType::f16, InputKind::random, 0, 0.2));
  t.add(check("softmax", "auto", DType::f16, InputKind::large, 1, 0.4));
  t.add(check("softmax", "auto", DType::f16, InputKind::spike, 2, 0.4));  // equal: the first stays
  t.add(check("softmax", "auto", DType::f32, InputKind::random, 0, 0.1));
  t.add(check("softmax", "looped", DType::f16, InputKind::constant, 3, 0.3));
  ASSERT_EQ(t.rows().size(), 3u);
  EXPECT_EQ(t.rows()[0].checks, 3);
  EXPECT_EQ(t.rows()[0].worst.kind, InputKind::large);
  EXPECT_EQ(t.rows()[0].worst.seed, 1);
  EXPECT_TRUE(t.all_within());
  t.add(check("row_sum", "cub", DType::bf16, InputKind::cancelling, 4, 1.5));
  EXPECT_FALSE(t.all_within());

  const std::vector<std::string> lines = share_report(t);
  // Four variant lines, then one per op and dtype: softmax float16 and float32, row_sum bfloat16.
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0].rfind("ok", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("inputs=large 3x1000 seed 1"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[3].rfind("FAIL", 0), 0u) << lines[3];
  EXPECT_NE(lines[4].find("softmax float16: worst 0.4"), std::string::npos) << lines[4];
  EXPECT_NE(lines[4].find("(auto, inputs=large"), std::string::npos) << lines[4];
  EXPECT_NE(lines[6].find("row_sum bfloat16: worst 1.5"), std::string::npos) << lines[6];
  EXPECT_TRUE(ShareTable().all_within());
}

TEST(ProbePlan, EveryOpDtypeAndInputKindOnTheProbeShapes) {
  ToleranceSettings s;
  s.seeds = 1;
  const std::vector<ProbeCase> cases = plan_tolerance_probe(s);
  for (const Op& op : registry().ops())
    for (const DType dt : kAllDTypes)
      for (const InputKind kind : op.input_kinds) {
        int shapes = 0;
        for (const ProbeCase& pc : cases)
          if (pc.c.op == op.name && pc.c.dtype == dt && pc.c.input_kind == kind) {
            ++shapes;
            EXPECT_FALSE(pc.variants.empty());
          }
        EXPECT_EQ(shapes, static_cast<int>(probe_shapes(op.shape_rank).size()))
            << op.name << " " << dtype_name(dt) << " " << input_kind_name(kind);
      }
  // Every variant of every op is checked somewhere, or refuses a probe case for want of the
  // device (the wgmma variants, where there is no sm_90 device: on the CPU machines).
  const std::string device = gemm::hopper_problem();
  for (const Op& op : registry().ops())
    for (const Variant* v : registry().variants(op.name)) {
      bool used = false, for_the_device = false;
      for (const ProbeCase& pc : cases) {
        for (const Variant* u : pc.variants) used = used || u == v;
        if (!device.empty() && pc.c.op == op.name)
          for_the_device = for_the_device || v->unsupported(pc.c).find(device) != std::string::npos;
      }
      EXPECT_TRUE(used || for_the_device) << op.name << " " << v->name;
    }
}

TEST(ProbePlan, NarrowsAndRefuses) {
  ToleranceSettings s;
  s.seeds = 2;
  s.ops = {"softmax"};
  s.dtypes = {DType::bf16};
  s.variants = {"auto"};
  for (const ProbeCase& pc : plan_tolerance_probe(s)) {
    EXPECT_EQ(pc.c.op, "softmax");
    EXPECT_EQ(pc.c.dtype, DType::bf16);
    ASSERT_EQ(pc.variants.size(), 1u);
    EXPECT_EQ(pc.variants[0]->name, "auto");
  }
  s.variants = {"nope"};
  EXPECT_THROW(plan_tolerance_probe(s), UsageError);
  s.variants = {};
  s.ops = {"softmaxx"};
  EXPECT_THROW(plan_tolerance_probe(s), UsageError);
  s.ops = {};
  s.seeds = 0;
  EXPECT_THROW(plan_tolerance_probe(s), UsageError);
}

}  // namespace
}  // namespace kbench
