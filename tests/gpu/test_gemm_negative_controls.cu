// Negative controls for gemm's oracle check: the tensor-core kernel template of gemm_mma.cuh
// instantiated here, in the test binary only, with one defect each (gemm::Fault):
//   - half_accumulator: float16 partial sums (mma .f16 accumulators), on the 2050 case;
//   - drop_k_tail: the last, partial K tile is never loaded (K = 200, BK = 64);
//   - skip_tile: one block of the grid returns without writing its tile.
// Each must fail the check, and the same instantiation without the defect must pass the same
// prepared case, so that it is the defect the check sees.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "gemm_inputs.hpp"
#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/gemm/gemm_mma.cuh"

namespace kbench::gemm {
namespace {

template <Fault F>
Launchable control() {
  Launchable v;
  v.name = "control";
  v.launch = [](const LaunchArgs& x) {
    const DeviceTensor &a = x.inputs[0], &b = x.inputs[1], &c = x.outputs[0];
    KB_CUDA((launch_mma_gemm<__half, 64, 64, 64, 32, 32, 3, false, false, F>(
        a.as<const __half>(), b.as<const __half>(), c.as<__half>(), static_cast<int>(c.rows),
        static_cast<int>(c.cols), static_cast<int>(a.cols), a.row_stride, b.row_stride, x.stream)));
  };
  return v;
}

void expect_caught(const Launchable& broken, const Case& c, const InputTweak& tweak, const char* what) {
  const Op& op = registry().op("gemm");
  Rng rng(21);
  const PreparedCase pc = prepare_case(op, c, rng, tweak);
  const CheckInfo intact = check_variant(pc, control<Fault::none>(), nullptr);
  EXPECT_TRUE(intact.passed) << what << ", intact: " << intact.detail;
  const CheckInfo info = check_variant(pc, broken, nullptr);
  EXPECT_FALSE(info.passed) << what << ": the broken kernel passed";
}

TEST(GemmGpu, CheckerRejectsAHalfAccumulator) {
  KB_REQUIRE_GPU();
  expect_caught(control<Fault::half_accumulator>(), Case{"gemm", DType::f16, {64, 64, 48}}, test::fill_2050,
                "float16 accumulator");
}

TEST(GemmGpu, CheckerRejectsADroppedKTail) {
  KB_REQUIRE_GPU();
  expect_caught(control<Fault::drop_k_tail>(), Case{"gemm", DType::f16, {96, 136, 200}}, {}, "dropped K tail");
}

TEST(GemmGpu, CheckerRejectsASkippedTile) {
  KB_REQUIRE_GPU();
  expect_caught(control<Fault::skip_tile>(), Case{"gemm", DType::f16, {192, 192, 128}}, {}, "skipped tile");
}

}  // namespace
}  // namespace kbench::gemm
