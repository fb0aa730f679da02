// The check of a case that compares sampled rows (a large grid cell: PreparedCase::check_rows),
// whose rows are gathered on the device and copied to the host at once: every variant passes,
// a wrong value in a sampled row is caught and named by its row, a write past the output's end
// is caught, and so is a second launch that differs in a sampled row.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

constexpr std::int64_t kRows = 300, kCols = 1000;

__global__ void add_one_at(float* y, std::int64_t k) { y[k] += 1.0f; }
__global__ void clobber_byte(unsigned char* p) { *p = 0; }
__global__ void count_launch(unsigned* n) { ++*n; }
__global__ void add_one_from_second(float* y, std::int64_t k, const unsigned* n) {
  if (*n >= 2) y[k] += 1.0f;
}

Case softmax_case() { return make_case(registry().op("softmax"), DType::f32, {kRows, kCols}); }

// The registered variant the broken ones run first: right on its own, and without a workspace
// (the broken ones may use theirs).
const Variant& base_variant(const Case& c) {
  for (const Variant* v : registry().variants("softmax"))
    if (v->unsupported(c).empty() && v->workspace_bytes(c) == 0) return *v;
  throw std::logic_error("no softmax variant");
}

PreparedCase sampled_case(const std::vector<std::int64_t>& rows) {
  Rng rng(4);
  return prepare_case(registry().op("softmax"), softmax_case(), rng, {}, rows);
}

TEST(SampledCheck, EveryVariantPassesOnSampledRows) {
  KB_REQUIRE_GPU();
  const PreparedCase pc = sampled_case(sample_rows(kRows, 16, 3));
  ASSERT_TRUE(sampled_output(pc, pc.output_desc[0]));
  ASSERT_EQ(pc.expected[0].values.size(), 16u * kCols);
  for (const Variant* v : registry().variants("softmax")) {
    if (!v->unsupported(pc.c).empty()) continue;
    const CheckInfo info = check_variant(pc, *v, nullptr);
    EXPECT_TRUE(info.passed) << v->name << ": " << info.detail;
  }
}

TEST(SampledCheck, AWrongSampledRowIsCaughtAndNamed) {
  KB_REQUIRE_GPU();
  // Consecutive rows (one gathered run) and lone ones.
  const std::vector<std::int64_t> rows{0, 1, 2, 40, 41, 150, 298, 299};
  const PreparedCase pc = sampled_case(rows);
  const Variant& base = base_variant(pc.c);
  for (const std::int64_t r : {std::int64_t{1}, std::int64_t{41}, std::int64_t{150}, std::int64_t{299}}) {
    Variant broken = base;
    broken.launch = [&base, r](const LaunchArgs& a) {
      base.launch(a);
      add_one_at<<<1, 1, 0, a.stream>>>(a.outputs[0].as<float>(), r * kCols + 7);
    };
    const CheckInfo info = check_variant(pc, broken, nullptr);
    EXPECT_FALSE(info.passed) << "row " << r;
    EXPECT_NE(info.detail.find("row " + std::to_string(r) + " col 7"), std::string::npos) << info.detail;
  }
}

TEST(SampledCheck, AWritePastTheEndIsCaught) {
  KB_REQUIRE_GPU();
  const PreparedCase pc = sampled_case(sample_rows(kRows, 16, 3));
  const Variant& base = base_variant(pc.c);
  Variant broken = base;
  broken.launch = [&base](const LaunchArgs& a) {
    base.launch(a);
    clobber_byte<<<1, 1, 0, a.stream>>>(static_cast<unsigned char*>(a.outputs[0].data) + kRows * kCols * 4 + 100);
  };
  const CheckInfo info = check_variant(pc, broken, nullptr);
  EXPECT_FALSE(info.passed);
  EXPECT_NE(info.detail.find("past its end"), std::string::npos) << info.detail;
}

TEST(SampledCheck, ASecondLaunchThatDiffersInASampledRowIsCaught) {
  KB_REQUIRE_GPU();
  const std::vector<std::int64_t> rows = sample_rows(kRows, 16, 3);
  const PreparedCase pc = sampled_case(rows);
  const Variant& base = base_variant(pc.c);
  Variant broken = base;
  broken.workspace_bytes = [](const Case&) { return sizeof(unsigned); };
  const std::int64_t k = rows[5] * kCols + 3;
  broken.launch = [&base, k](const LaunchArgs& a) {
    base.launch(LaunchArgs{a.c, a.inputs, a.outputs, nullptr, a.stream});
    auto* n = static_cast<unsigned*>(a.workspace);
    count_launch<<<1, 1, 0, a.stream>>>(n);
    add_one_from_second<<<1, 1, 0, a.stream>>>(a.outputs[0].as<float>(), k, n);
  };
  const CheckInfo info = check_variant(pc, broken, nullptr);
  EXPECT_FALSE(info.passed);
  EXPECT_NE(info.detail.find("second launch"), std::string::npos) << info.detail;
}

}  // namespace
}  // namespace kbench
