// kbench spec on the GPU: every build of softmax and rmsnorm against the registered op's FP64
// oracle (prepare_case/check_variant: NaN-poisoned outputs, every element compared, a second
// launch bit-identical) at small shapes of the built widths, contiguous (aligned rows where the
// width is whole vectors) and strided (unaligned rows: the runtime head); the attributes it
// reads; and a shortened run whose records, attributes and analysis are whole.
#include <gtest/gtest.h>

#include "experiments/spec.hpp"
#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/rows/spec/spec_builds.hpp"

namespace kbench {
namespace {

namespace spec = rows::spec;

struct Small {
  std::int64_t rows, cols, stride;
};
// 4097 and 8200 end in a tail; a stride of width + 3 starts every row but the first off a
// 16-byte boundary, so the head varies by row.
const Small kSmall[] = {{5, 4096, 0}, {3, 4097, 0}, {4, 4104, 0}, {2, 8192, 0}, {3, 8200, 0},
                        {3, 4096, 4099}, {3, 8200, 8203}};

TEST(SpecGpu, EveryBuildMatchesTheOracle) {
  KB_REQUIRE_GPU();
  int checked = 0;
  for (const auto& op : spec::spec_ops())
    for (DType d : kAllDTypes)
      for (const Small& s : kSmall) {
        Case c = make_case(registry().op(op), d, {s.rows, s.cols});
        c.row_stride = s.stride;
        Rng rng(7);
        const PreparedCase pc = prepare_case(registry().op(op), c, rng);
        for (spec::Build b : spec::kBuilds) {
          if (!spec::build_unsupported(c, b).empty()) continue;
          const CheckInfo info = check_variant(pc, spec::build_launchable(op, b), nullptr);
          EXPECT_TRUE(info.passed) << case_label(c) << " stride " << s.stride << " " << spec::build_name(b) << ": "
                                   << info.detail;
          ++checked;
        }
      }
  // 2 ops x 3 dtypes x 7 shapes x 3 builds, less rmsnorm float32 at 8200 (no resident plan: 2 shapes x 3).
  EXPECT_EQ(checked, 2 * 3 * 7 * 3 - 6);
}

TEST(SpecGpu, AttributesNameTheInstantiationAndItsResources) {
  KB_REQUIRE_GPU();
  const Case c = make_case(registry().op("softmax"), DType::f32, {4096, 4097});
  const auto width = spec::build_attributes(c, spec::Build::template_width);
  // 1024 whole vectors and a scalar (RowRules::edges_as_scalars): 128 threads of 8.
  EXPECT_EQ(width.kernel, "template_width<4097> vecs=8 lanes=128 unaligned");
  EXPECT_EQ(width.threads, 128);
  EXPECT_GT(width.registers, 0);
  EXPECT_GE(width.blocks_per_sm, 1);
  EXPECT_GE(width.max_threads_per_block, 128);
  // 32 floats of scratch; cuobjdump shows 1152 bytes (1 KiB more, which sm_90 reserves per block):
  // which of the two the runtime reports is for this test to show.
  EXPECT_GE(width.shared_bytes, 32 * sizeof(float));
  EXPECT_LE(width.shared_bytes, 1024 + 32 * sizeof(float));
  const auto runtime = spec::build_attributes(c, spec::Build::runtime);
  EXPECT_EQ(runtime.kernel, "runtime");
  EXPECT_LE(runtime.registers, 64);  // a 1024-thread launch bound
  const Case aligned = make_case(registry().op("rmsnorm"), DType::bf16, {4096, 4104});
  EXPECT_EQ(spec::build_attributes(aligned, spec::Build::template_vecs).kernel, "template_vecs<4> aligned");
}

TEST(SpecGpu, ShortRunGivesRecordsAttributesAndAnalysis) {
  KB_REQUIRE_GPU();
  SpecSettings s;
  s.ops = {"softmax", "rmsnorm"};
  s.dtypes = {DType::f32};
  s.shapes = {{64, 4097}, {64, 8200}};
  s.visits = 2;
  s.samples = 1;
  const Result r = run_experiment(spec_experiment(s), {"test"});
  EXPECT_TRUE(r.extra.at("check_failures").empty()) << r.extra.at("check_failures").dump();
  // softmax: 3 builds at both shapes; rmsnorm: 3 at 4097, none at 8200 (no resident plan).
  EXPECT_EQ(r.records.size(), 9u);
  EXPECT_EQ(r.extra.at("spec").at("kernels").size(), 9u);
  for (const Record& rec : r.records) EXPECT_GT(rec.median_us, 0) << rec.op << " " << rec.variant;
  const auto& a = r.extra.at("spec").at("analysis");
  EXPECT_EQ(a.at("cells").size(), 3u);
  EXPECT_EQ(a.at("statements").size(), 2u);
  EXPECT_TRUE(r.manifest.at("measured").contains("softmax"));
}

}  // namespace
}  // namespace kbench
