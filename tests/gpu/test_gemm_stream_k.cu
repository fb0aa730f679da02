// Stream-K (WgmmaConfig::streamk; wgmma_128x256_sk and wgmma_128x192_sk): the last partial wave's
// tiles (with the wave before, where that wave is thin) cut by K among all the blocks of the
// persistent grid (stream_k_walk, gemm_tiles.hpp), a cut tile's float32 partials written by the
// blocks that hold its later pieces and added in block order by the block that holds its start
// (gemm_wgmma.cuh's stream_k_fixup).
//   - Against the exact product (small integers: every float32 sum exact), on grids of 5, 7 and
//     132 blocks, so that the cuts fall at different k-steps of different tiles, a tile in two to
//     five pieces, and both schedules (the last wave alone, and with the wave before); K of 2, 4,
//     5, 8 and 16 k-tiles (ragged); launched twice, since the first launch must leave its flags zero
//     for the second, and checked that it did.
//   - Two launches give the same bits on inputs whose sums are not exact (the order is fixed).
//   - Where the tiles fill whole waves (or fewer than one) there is nothing to cut: no workspace.
//   - The negative control: with the cut tiles' partials never added (Fault::skip_stream_k_partial),
//     the exact check must fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "gpu_test.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_wgmma.cuh"

namespace kbench::gemm {
namespace {

constexpr WgmmaConfig kStreamK256 = kWgmmaConfigs[10], kStreamK192 = kWgmmaConfigs[11];
static_assert(kStreamK256.streamk && kStreamK256.bn == 256 && kStreamK192.streamk && kStreamK192.bn == 192,
              "the two stream-K configurations");

struct Shape {
  int m, n, k, blocks;
};
// Each cuts tiles at both widths (checked below). At 256 and 192 wide: the tiles cut, and the
// k-steps of a block's range against a tile's.
constexpr Shape kCutShapes[] = {
    {1000, 1000, 1000, 7},   // 4 of 32 tiles, 9.1 of 16 steps; 6 of 48, 13.7 (the last 40 of K ragged)
    {1000, 1000, 72, 5},     // 7 of 32 (with the wave before: 2 tiles would give blocks under a step), 2.8 of 2; 3 of 48, 1.2
    {300, 1800, 264, 7},     // 3 of 24, 2.1 of 5 (ragged); 2 of 30, 1.4: up to five pieces a tile
    {2200, 2104, 200, 132},  // 162 of 162 (30 would be under a quarter of 132), 4.9 of 4; 66 of 198, 2 (N: TMA needs 8s)
    {5504, 1024, 512, 132},  // 40 of 172, 2.4 of 8: four or five pieces; 126 of 258, 7.6
};

int k_tiles_of(const Shape& s) { return (s.k + 63) / 64; }

// A and B ([M, K] and [K, N] rows) as float16 bits from av and bv.
struct Operands {
  DeviceBuffer a, b;
  Operands(const std::vector<double>& av, const std::vector<double>& bv) : a(av.size() * 2), b(bv.size() * 2) {
    std::vector<std::uint16_t> ha(av.size()), hb(bv.size());
    for (std::size_t i = 0; i < av.size(); ++i) ha[i] = float_to_half_bits(static_cast<float>(av[i]));
    for (std::size_t i = 0; i < bv.size(); ++i) hb[i] = float_to_half_bits(static_cast<float>(bv[i]));
    KB_CUDA(cudaMemcpy(a.get(), ha.data(), a.size(), cudaMemcpyHostToDevice));
    KB_CUDA(cudaMemcpy(b.get(), hb.data(), b.size(), cudaMemcpyHostToDevice));
  }
};

// C's bits from `launches` launches of W at fault F on a grid of s.blocks (C set to NaN before
// each), the workspace (slots and flags) shared by them; the flags must be zero after each.
template <WgmmaConfig W, Fault F = Fault::none>
std::vector<std::vector<std::uint16_t>> launch_streamk(const Operands& x, const Shape& s, int launches) {
  const std::size_t slots = static_cast<std::size_t>(s.blocks) * 128 * W.bn;
  DeviceBuffer dc(static_cast<std::size_t>(s.m) * s.n * 2), dslots(slots * sizeof(float)),
      dflags(static_cast<std::size_t>(s.blocks) * sizeof(unsigned));
  KB_CUDA(cudaMemset(dflags.get(), 0, dflags.size()));
  std::vector<std::vector<std::uint16_t>> out;
  for (int launch = 0; launch < launches; ++launch) {
    KB_CUDA(cudaMemset(dc.get(), 0xFF, dc.size()));  // NaN: an element left unwritten shows
    KB_CUDA((launch_wgmma_gemm<__half, W, false, true, F>(
        static_cast<const __half*>(x.a.get()), s.k, static_cast<const __half*>(x.b.get()), s.n,
        static_cast<__half*>(dc.get()), s.m, s.n, s.k, s.blocks, nullptr, 1, static_cast<float*>(dslots.get()),
        static_cast<unsigned*>(dflags.get()))));
    out.emplace_back(static_cast<std::size_t>(s.m) * s.n);
    KB_CUDA(cudaMemcpy(out.back().data(), dc.get(), dc.size(), cudaMemcpyDeviceToHost));
    std::vector<unsigned> flags(static_cast<std::size_t>(s.blocks));
    KB_CUDA(cudaMemcpy(flags.data(), dflags.get(), dflags.size(), cudaMemcpyDeviceToHost));
    for (std::size_t b = 0; b < flags.size(); ++b)
      EXPECT_EQ(flags[b], 0u) << "wgmma_" << W.name() << " launch " << launch << ": block " << b << "'s flag left set";
  }
  return out;
}

// The elements of C that differ from the exact product, over two launches.
template <WgmmaConfig W, Fault F = Fault::none>
int exact_differences(const Shape& s) {
  std::vector<double> av(static_cast<std::size_t>(s.m) * s.k), bv(static_cast<std::size_t>(s.k) * s.n);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>((i * 7 + 3) % 9) - 4;
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>((i * 5 + 1) % 7) - 3;
  const Operands x(av, bv);
  const auto got = launch_streamk<W, F>(x, s, 2);
  int bad = 0;
  std::vector<double> row(static_cast<std::size_t>(s.n));
  for (int i = 0; i < s.m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int q = 0; q < s.k; ++q) {
      const double a = av[static_cast<std::size_t>(i) * s.k + q];
      for (int j = 0; j < s.n; ++j) row[static_cast<std::size_t>(j)] += a * bv[static_cast<std::size_t>(q) * s.n + j];
    }
    for (int j = 0; j < s.n; ++j)  // rounded once to float16, as the kernel rounds its float32 sum
      for (std::size_t launch = 0; launch < got.size(); ++launch)
        if (got[launch][static_cast<std::size_t>(i) * s.n + j] !=
                float_to_half_bits(static_cast<float>(row[static_cast<std::size_t>(j)])) &&
            bad++ < 3 && F == Fault::none)
          ADD_FAILURE() << "wgmma_" << W.name() << " " << s.m << "x" << s.n << "x" << s.k << " blocks " << s.blocks
                        << " launch " << launch << " at (" << i << ", " << j << "): "
                        << half_bits_to_float(got[launch][static_cast<std::size_t>(i) * s.n + j]) << ", expected "
                        << row[static_cast<std::size_t>(j)];
  }
  return bad;
}

TEST(GemmGpu, WgmmaStreamKMatchesTheExactProduct) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  for (const Shape& s : kCutShapes) {
    ASSERT_GT(stream_k_tiles(wgmma_tiles(kStreamK256, s.m, s.n), s.blocks, k_tiles_of(s)), 0) << s.m << "x" << s.n;
    ASSERT_GT(stream_k_tiles(wgmma_tiles(kStreamK192, s.m, s.n), s.blocks, k_tiles_of(s)), 0) << s.m << "x" << s.n;
    EXPECT_EQ(exact_differences<kStreamK256>(s), 0);
    EXPECT_EQ(exact_differences<kStreamK192>(s), 0);
  }
}

// Where nothing is cut (16 tiles on 132 blocks; 32 on 4, whole waves), no workspace is needed.
TEST(GemmGpu, WgmmaStreamKWithoutCutsNeedsNoWorkspace) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  for (const Shape& s : {Shape{1000, 1000, 264, 132}, Shape{1000, 1024, 264, 4}}) {
    ASSERT_EQ(stream_k_tiles(wgmma_tiles(kStreamK256, s.m, s.n), s.blocks, k_tiles_of(s)), 0);
    std::vector<double> av(static_cast<std::size_t>(s.m) * s.k, 1.0), bv(static_cast<std::size_t>(s.k) * s.n, 1.0);
    const Operands x(av, bv);
    DeviceBuffer dc(static_cast<std::size_t>(s.m) * s.n * 2);
    KB_CUDA((launch_wgmma_gemm<__half, kStreamK256, false, true>(
        static_cast<const __half*>(x.a.get()), s.k, static_cast<const __half*>(x.b.get()), s.n,
        static_cast<__half*>(dc.get()), s.m, s.n, s.k, s.blocks, nullptr)));
    std::vector<std::uint16_t> c(static_cast<std::size_t>(s.m) * s.n);
    KB_CUDA(cudaMemcpy(c.data(), dc.get(), dc.size(), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (const std::uint16_t v : c) bad += v != float_to_half_bits(static_cast<float>(s.k));
    EXPECT_EQ(bad, 0) << s.m << "x" << s.n << " on " << s.blocks << " blocks";
  }
  // Where tiles are cut and no workspace is given, the launch is refused rather than run.
  const Shape s = kCutShapes[0];
  std::vector<double> av(static_cast<std::size_t>(s.m) * s.k, 1.0), bv(static_cast<std::size_t>(s.k) * s.n, 1.0);
  const Operands x(av, bv);
  DeviceBuffer dc(static_cast<std::size_t>(s.m) * s.n * 2);
  EXPECT_EQ((launch_wgmma_gemm<__half, kStreamK256, false, true>(
                static_cast<const __half*>(x.a.get()), s.k, static_cast<const __half*>(x.b.get()), s.n,
                static_cast<__half*>(dc.get()), s.m, s.n, s.k, s.blocks, nullptr)),
            cudaErrorInvalidValue);
}

// Sums that float32 rounds: the bits depend on the order of the additions, which stream-K fixes
// (a cut tile's own k-steps, then the later blocks' partials in block order), so two launches
// agree bit for bit.
TEST(GemmGpu, WgmmaStreamKGivesTheSameBitsTwice) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  const Shape s = kCutShapes[0];
  std::vector<double> av(static_cast<std::size_t>(s.m) * s.k), bv(static_cast<std::size_t>(s.k) * s.n);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>((i * 2654435761u) % 2001) / 1000.0 - 1.0;
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>((i * 40503u) % 2001) / 1000.0 - 1.0;
  const Operands x(av, bv);
  const auto c256 = launch_streamk<kStreamK256>(x, s, 2);
  EXPECT_EQ(std::memcmp(c256[0].data(), c256[1].data(), c256[0].size() * 2), 0);
  const auto c192 = launch_streamk<kStreamK192>(x, s, 2);
  EXPECT_EQ(std::memcmp(c192[0].data(), c192[1].data(), c192[0].size() * 2), 0);
}

// The negative control: the cut tiles' partials never added; the exact check must fail.
TEST(GemmGpu, WgmmaStreamKCheckRejectsADroppedPartial) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  EXPECT_GT((exact_differences<kStreamK256, Fault::skip_stream_k_partial>(kCutShapes[0])), 0);
}

}  // namespace
}  // namespace kbench::gemm
