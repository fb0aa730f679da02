// copy and add: every variant against the oracle at awkward and large sizes, a broken launcher
// that the check must catch, and the harness's four timing modes end to end.
#include <gtest/gtest.h>

#include "experiments/sweep.hpp"
#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/add/add.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

const std::int64_t kSizes[] = {1, 3, 1000, (1 << 20) + 3, std::int64_t{1} << 28};
// 2^28 elements (the sweep's roofline size) in float32 only: 1 GiB per buffer covers the large
// counts, and the host's random inputs and FP64 oracle for all three dtypes took 2.2 of the
// GPU suite's 3 minutes. Every sweep still checks each dtype it times at that size.
bool worth_checking(DType t, std::int64_t n) { return n < (std::int64_t{1} << 28) || t == DType::f32; }

class CopyAddCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(CopyAddCheck, EveryVariantMatchesTheOracle) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op(GetParam());
  Rng rng(42);
  for (DType t : kAllDTypes)
    for (std::int64_t n : kSizes) {
      if (!worth_checking(t, n)) continue;
      const Case c{op.name, t, {n}};
      const PreparedCase pc = prepare_case(op, c, rng);
      for (const Variant* v : registry().variants(op.name)) {
        const CheckInfo info = check_variant(pc, *v, nullptr);
        EXPECT_TRUE(info.passed) << op.name << "/" << v->name << " " << dtype_name(t) << " n=" << n
                                 << ": " << info.detail;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Ops, CopyAddCheck, ::testing::Values("copy", "add"));

// A vectorized add that forgets the elements after the last whole 16-byte vector.
TEST(CopyAddCheck, DroppedTailIsCaught) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("add");
  Variant broken;
  broken.op = "add";
  broken.name = "dropped_tail";
  broken.launch = [](const LaunchArgs& a) {
    const std::int64_t per_vector = 16 / static_cast<std::int64_t>(dtype_size(a.c.dtype));
    const std::int64_t n = a.c.shape[0] / per_vector * per_vector;
    launch_add_vec16(a.c.dtype, a.inputs[0].data, a.inputs[1].data, a.outputs[0].data, n, a.stream);
  };
  Rng rng(7);
  for (DType t : kAllDTypes) {
    const PreparedCase pc = prepare_case(op, Case{"add", t, {(1 << 20) + 3}}, rng);
    const CheckInfo info = check_variant(pc, broken, nullptr);
    EXPECT_FALSE(info.passed) << dtype_name(t);
    EXPECT_NE(info.detail.find("col 1048576"), std::string::npos) << info.detail;
  }
}

// A kernel that writes one element past its output is caught by the guard region.
TEST(CopyAddCheck, WritePastTheEndIsCaught) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("copy");
  Variant broken;
  broken.op = "copy";
  broken.name = "overrun";
  broken.launch = [](const LaunchArgs& a) {
    const std::int64_t bytes = a.c.shape[0] * static_cast<std::int64_t>(dtype_size(a.c.dtype));
    KB_CUDA(cudaMemcpyAsync(a.outputs[0].data, a.inputs[0].data, bytes, cudaMemcpyDeviceToDevice, a.stream));
    KB_CUDA(cudaMemsetAsync(static_cast<char*>(a.outputs[0].data) + bytes, 0, 4, a.stream));
  };
  Rng rng(8);
  const PreparedCase pc = prepare_case(op, Case{"copy", DType::f32, {1000}}, rng);
  const CheckInfo info = check_variant(pc, broken, nullptr);
  EXPECT_FALSE(info.passed);
  EXPECT_NE(info.detail.find("past its end"), std::string::npos) << info.detail;
}

// Both timers and both cache modes produce records with every raw sample and say what they time.
TEST(Harness, EveryCacheModeAndTimerProducesRecords) {
  KB_REQUIRE_GPU();
  SweepSettings s;
  s.cases = {CaseSpec{"add", {DType::f16}, {{1 << 20}}, {}}};
  s.caches = {"cold", "warm"};
  s.timers = {"events", "graph"};
  s.visits = 2;
  s.samples = 2;
  s.roofline = false;
  const Result r = run_experiment(sweep_experiment(s), {"test"});
  const std::size_t variants = registry().variants("add").size();
  ASSERT_EQ(r.records.size(), variants * 4);
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.samples_us.size(), 4u);
    EXPECT_EQ(rec.sample_visits.size(), 4u);
    EXPECT_GT(rec.median_us, 0);
    EXPECT_LE(rec.min_us, rec.median_us);
    EXPECT_TRUE(rec.check.passed);
    if (rec.timer == "graph") {
      EXPECT_GT(rec.launches_per_sample, 1);
      EXPECT_NE(rec.timer_note.find("excludes host launch overhead"), std::string::npos);
    } else {
      EXPECT_EQ(rec.launches_per_sample, 1);
      EXPECT_NE(rec.timer_note.find("GPU-side launch cost included"), std::string::npos);
    }
  }
  EXPECT_GT(r.warmup.at("sm_clock_mhz").get<double>(), 0);
  EXPECT_TRUE(r.load.contains("before"));
  EXPECT_FALSE(r.extra.at("comparisons").empty());
}

}  // namespace
}  // namespace kbench
