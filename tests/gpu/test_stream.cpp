// stream (the same-traffic rooflines): every mix, dtype and variant against the oracle at awkward
// sizes (a tail of single elements after the last vector, a single element), the read-only
// streams over many chunks a block, and a dropped tail that the check must catch.
#include <gtest/gtest.h>

#include <vector>

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

// The read-only streams over more 16 KiB chunks than the grid has blocks (each block then walks
// several), the last chunk a few elements past the last whole vector.
TEST(StreamGpu, ReadOnlyStreamsWalkManyChunksABlock) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("stream");
  Rng rng(11);
  int ran = 0;
  for (int reads = 1; reads <= kStreamMaxReads; ++reads) {
    const PreparedCase pc = prepare_case(op, stream_case((std::int64_t{1} << 23) + 5, reads, 0), rng);
    EXPECT_EQ(pc.output_desc.at(0).cols, 2049);
    for (const Variant* v : registry().variants("stream")) {
      const CheckInfo info = check_variant(pc, *v, nullptr);
      EXPECT_TRUE(info.passed) << case_label(pc.c) << " " << v->name << ": " << info.detail;
      ++ran;
    }
  }
  EXPECT_EQ(ran, 3 * 2);
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
