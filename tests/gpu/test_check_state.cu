// The oracle check's second launch: a variant whose output depends on what an earlier launch
// left in its workspace is right once and wrong in every timed launch after; the check must
// fail it.
#include <gtest/gtest.h>

#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

// A copy that keeps state in its workspace between launches (a counter it never resets) and
// drops the last element from the second launch on: right once, wrong in every timed launch
// after. The check's second launch on the same workspace must catch it.
__global__ void count_launches(unsigned* n) { ++*n; }
__global__ void copy_unless_counted(const float* x, float* y, std::int64_t n, const unsigned* count) {
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (i + 1 < n || *count < 2) y[i] = x[i];
}

TEST(CopyAddCheck, StateLeftInTheWorkspaceIsCaught) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("copy");
  Variant broken = make_variant("copy", "stateful", "", nullptr);
  broken.workspace_bytes = [](const Case&) { return sizeof(unsigned); };
  broken.launch = [](const LaunchArgs& a) {
    auto* count = static_cast<unsigned*>(a.workspace);
    count_launches<<<1, 1, 0, a.stream>>>(count);
    copy_unless_counted<<<64, 256, 0, a.stream>>>(a.inputs[0].as<const float>(), a.outputs[0].as<float>(),
                                                  a.c.shape[0], count);
  };
  Rng rng(9);
  const PreparedCase pc = prepare_case(op, Case{"copy", DType::f32, {1000}}, rng);
  const CheckInfo info = check_variant(pc, broken, nullptr);
  EXPECT_FALSE(info.passed);
  EXPECT_NE(info.detail.find("second launch"), std::string::npos) << info.detail;
}

// A launch configuration the device refuses (2048 threads a block: 1024 is the most) is an error
// that leaves the CUDA context usable: the check fails that variant with the error, and the next
// variant's check on the same prepared case runs and passes. (A sticky fault is the worker
// tests' subject: test_fault_isolation.cpp.)
TEST(CopyAddCheck, ARefusedLaunchIsCaughtAndTheNextVariantIsChecked) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("copy");
  Variant refused = make_variant("copy", "too_many_threads", "", nullptr);
  refused.launch = [](const LaunchArgs& a) {
    copy_unless_counted<<<1, 2048, 0, a.stream>>>(a.inputs[0].as<const float>(), a.outputs[0].as<float>(),
                                                  a.c.shape[0], nullptr);
    KB_CUDA_LAUNCH();
  };
  Rng rng(9);
  const PreparedCase pc = prepare_case(op, Case{"copy", DType::f32, {1000}}, rng);
  const CheckInfo info = check_variant(pc, refused, nullptr);
  EXPECT_FALSE(info.passed);
  EXPECT_NE(info.detail.find("a CUDA call failed"), std::string::npos) << info.detail;
  EXPECT_NE(info.detail.find("cudaGetLastError"), std::string::npos) << info.detail;
  const std::vector<const Variant*> copies = registry().variants("copy");
  ASSERT_FALSE(copies.empty());
  const CheckInfo next = check_variant(pc, *copies.front(), nullptr);
  EXPECT_TRUE(next.passed) << next.detail;
}

}  // namespace
}  // namespace kbench
