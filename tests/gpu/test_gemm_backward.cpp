// gemm_backward on the GPU: every variant against the FP64 oracle with both gradients, with one
// switched off, on ragged tiles (M, N, K not multiples of 128) and K = M (sampled rows); then
// gemm_step's. Under racecheck, cuBLAS's variants are left out (vendor_gemms.hpp).
#include <gtest/gtest.h>

#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "vendor_gemms.hpp"

namespace kbench {
namespace {

TEST(GemmBackwardGpu, EveryVariantWithEachGradientSwitchedOff) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("gemm_backward");
  const Shape shapes[] = {{136, 72, 88}, {200, 136, 264}, {33, 64, 128}, {256, 256, 256}, {1000, 520, 1000}};
  const std::map<std::string, double> flags[] = {{}, {{"da", 0}}, {{"db", 0}}};
  for (const DType t : kAllDTypes)
    for (const Shape& s : shapes)
      for (const auto& f : flags) {
        const Case c = make_case(op, t, s, f);
        Rng rng(4);
        const PreparedCase pc = prepare_case(op, c, rng);
        int ran = 0;
        for (const Variant* v : registry().variants("gemm_backward")) {
          if (!v->unsupported(c).empty() || test::left_out_here(*v)) continue;
          const CheckInfo info = check_variant(pc, *v, nullptr);
          EXPECT_TRUE(info.passed) << case_label(c) << " " << v->name << ": " << info.detail;
          ++ran;
        }
        // mma and auto for 16-bit, wgmma too on sm_90; cublas and cublas_best.
        const int hopper = gemm::hopper_problem().empty() ? 1 : 0;
        EXPECT_EQ(ran, (t == DType::f32 ? 0 : 2 + hopper) + test::cublas_checked(2)) << case_label(c);
      }
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

TEST(GemmStepGpu, EveryVariantWithAndWithoutEachGradient) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("gemm_step");
  const Shape shapes[] = {{136, 72, 88}, {256, 256, 256}, {127, 255, 65}};
  const std::map<std::string, double> flags[] = {{}, {{"da", 0}}, {{"db", 0}}};
  for (const DType t : kAllDTypes)
    for (const Shape& s : shapes)
      for (const auto& f : flags) {
        const Case c = make_case(op, t, s, f);
        Rng rng(5);
        const PreparedCase pc = prepare_case(op, c, rng);
        int ran = 0;
        for (const Variant* v : registry().variants("gemm_step")) {
          if (!v->unsupported(c).empty() || test::left_out_here(*v)) continue;
          const CheckInfo info = check_variant(pc, *v, nullptr);
          EXPECT_TRUE(info.passed) << case_label(c) << " " << v->name << ": " << info.detail;
          ++ran;
        }
        // auto (and wgmma on sm_90) where its parts take the case: 16-bit, and rows of N and K
        // whole 16-byte chunks for the tensor-core backward (not 127x255x65); cublas and
        // cublas_best always.
        const bool mma = t != DType::f32 && s[1] % 8 == 0 && s[2] % 8 == 0;
        const int hopper = gemm::hopper_problem().empty() ? 1 : 0;
        EXPECT_EQ(ran, (mma ? 1 + hopper : 0) + test::cublas_checked(2)) << case_label(c);
      }
}

}  // namespace
}  // namespace kbench
