// stream (the same-traffic rooflines): every mix and variant against the oracle at awkward sizes
// (a tail of single floats after the last vector, a single element), the read-only stream's
// scratch left zero for the next launch, and a dropped tail that the check must catch.
#include <gtest/gtest.h>

#include <vector>

#include "core/device_buffer.hpp"
#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/stream/stream.hpp"

namespace kbench {
namespace {

Case stream_case(std::int64_t n, int reads, int writes, DType t = DType::f32) {
  return make_case(registry().op("stream"), t, {n}, {{"reads", reads}, {"writes", writes}});
}

TEST(StreamGpu, EveryMixAndVariantMatchesTheOracle) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("stream");
  Rng rng(5);
  int ran = 0;
  for (const DType t : kAllDTypes)
  for (int reads = 1; reads <= kStreamMaxReads; ++reads)
    for (int writes = 0; writes <= kStreamMaxWrites; ++writes)
      for (const std::int64_t n : {std::int64_t{1}, std::int64_t{3}, std::int64_t{1000}, std::int64_t{(1 << 20) + 3}}) {
        const PreparedCase pc = prepare_case(op, stream_case(n, reads, writes, t), rng);
        for (const Variant* v : registry().variants("stream")) {
          const CheckInfo info = check_variant(pc, *v, nullptr);
          EXPECT_TRUE(info.passed) << case_label(pc.c) << " " << v->name << ": " << info.detail;
          ++ran;
        }
      }
  EXPECT_EQ(ran, 3 * 3 * 3 * 4 * 2);
}

// Two launches of the read-only stream on one scratch, the second over smaller values: each
// reports its own largest element only if the first left the scratch at zero.
TEST(StreamGpu, ReadOnlyStreamLeavesItsScratchZero) {
  KB_REQUIRE_GPU();
  const std::int64_t n = (1 << 22) + 1;
  DeviceBuffer x(n * sizeof(float)), out(sizeof(float)), scratch(sizeof(StreamMaxScratch));
  KB_CUDA(cudaMemset(scratch.get(), 0, scratch.size()));
  for (const float top : {0.5f, 0.25f, -0.125f}) {
    std::vector<float> host(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) host[i] = top - static_cast<float>(i % 977) * (1.0f / 1024);
    host[static_cast<std::size_t>(n / 3)] = top + 0.0625f;  // the largest, somewhere in the middle
    KB_CUDA(cudaMemcpy(x.get(), host.data(), x.size(), cudaMemcpyHostToDevice));
    const void* inputs[1] = {x.get()};
    for (const bool streaming : {false, true}) {
      launch_stream(DType::f32, inputs, 1, nullptr, 0, out.get(), static_cast<StreamMaxScratch*>(scratch.get()), n,
                    streaming, nullptr);
      float got = 0;
      KB_CUDA(cudaMemcpy(&got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, top + 0.0625f) << "streaming " << streaming;
    }
  }
  StreamMaxScratch left{1, 1};
  KB_CUDA(cudaMemcpy(&left, scratch.get(), sizeof left, cudaMemcpyDeviceToHost));
  EXPECT_EQ(left.key, 0u);
  EXPECT_EQ(left.arrived, 0u);
}

// A stream that forgets the floats after the last whole vector: the check must fail it.
TEST(StreamGpu, DroppedTailIsCaught) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("stream");
  Variant broken = registry().variant("stream", "vec16");
  broken.name = "dropped_tail";
  const auto whole = broken.launch;
  broken.launch = [whole](const LaunchArgs& a) {
    Case shorter = a.c;
    shorter.shape = {a.c.shape[0] / 4 * 4};
    whole(LaunchArgs{shorter, a.inputs, a.outputs, a.workspace, a.stream});
  };
  Rng rng(9);
  const PreparedCase pc = prepare_case(op, stream_case((1 << 20) + 3, 2, 1), rng);
  const CheckInfo info = check_variant(pc, broken, nullptr);
  EXPECT_FALSE(info.passed);
  EXPECT_NE(info.detail.find("col 1048576"), std::string::npos) << info.detail;
  EXPECT_TRUE(check_variant(pc, registry().variant("stream", "vec16"), nullptr).passed);
}

}  // namespace
}  // namespace kbench
