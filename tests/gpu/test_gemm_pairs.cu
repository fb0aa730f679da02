// The Hopper kernel's pairs (`_c2`: 2-block clusters, each block loading half of B's panels and
// multicasting them to both) against the same tile without clusters, at a size of many tiles a
// block (float16 4096^3: 512 tiles of 128 x 256, 1024 of 128 x 128, several per block of the
// persistent grid), which the layout and oracle tests, at a few tiles, do not reach. C is NaN
// before the launch and must equal the unclustered tile's C bit for bit: every tile written, and
// each in its place (the inputs differ from row to row and column to column, and every sum is
// exact in float32, so any order of the adds gives the same bits).
// Their speed against the tiles alone is a benchmark's (configs/gemm_pairs.json), not a test's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_fp16.h>

#include "core/device_buffer.hpp"
#include "core/errors.hpp"
#include "device/device_limits.hpp"
#include "gpu_test.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_wgmma.cuh"

namespace kbench::gemm {
namespace {

constexpr int kSize = 4096;

// Element (r, c) is ((3r + 5c) mod 17 - 8) / 8: multiples of 1/8 in [-1, 1], exact in float16;
// a product is a multiple of 1/64 and a sum of 4096 of them at most 4096 in magnitude, so
// float32 holds every partial sum exactly (2^12 x 2^6 = 2^18 < 2^24).
DeviceBuffer pattern(int salt) {
  std::vector<__half> host(static_cast<std::size_t>(kSize) * kSize);
  for (int r = 0; r < kSize; ++r)
    for (int c = 0; c < kSize; ++c)
      host[static_cast<std::size_t>(r) * kSize + c] = __float2half(static_cast<float>((3 * r + 5 * c + salt) % 17 - 8) / 8.f);
  DeviceBuffer d(host.size() * sizeof(__half));
  KB_CUDA(cudaMemcpy(d.get(), host.data(), host.size() * sizeof(__half), cudaMemcpyHostToDevice));
  return d;
}

// C = A.B at configuration W on the persistent grid of the device's multiprocessors, into a C
// of NaN; returns C's bits.
template <WgmmaConfig W>
std::vector<std::uint16_t> product(const DeviceBuffer& a, const DeviceBuffer& b) {
  const std::size_t elements = static_cast<std::size_t>(kSize) * kSize;
  DeviceBuffer c(elements * sizeof(__half));
  auto* const cp = static_cast<__half*>(c.get());
  KB_CUDA(cudaMemset(cp, 0xFF, elements * sizeof(__half)));
  KB_CUDA((launch_wgmma_gemm<__half, W, false, true>(static_cast<const __half*>(a.get()), kSize,
                                                    static_cast<const __half*>(b.get()), kSize, cp, kSize, kSize,
                                                    kSize, current_device_limits().sms, nullptr)));
  KB_CUDA(cudaDeviceSynchronize());
  std::vector<std::uint16_t> host(elements);
  KB_CUDA(cudaMemcpy(host.data(), cp, elements * sizeof(__half), cudaMemcpyDeviceToHost));
  return host;
}

template <WgmmaConfig kAlone, WgmmaConfig kPair>
void expect_pair_like_alone(const DeviceBuffer& a, const DeviceBuffer& b) {
  static_assert(kAlone.cluster == 1 && kPair.cluster == 2 && kAlone.bn == kPair.bn && kAlone.stages == kPair.stages &&
                    kAlone.direct == kPair.direct,
                "the same tile, stages and epilogue, with and without the pair");
  const std::vector<std::uint16_t> alone = product<kAlone>(a, b), pair = product<kPair>(a, b);
  const std::string what = "wgmma_" + kPair.name() + " against wgmma_" + kAlone.name();
  const auto nan = [](const std::vector<std::uint16_t>& c) {
    return std::count_if(c.begin(), c.end(), [](std::uint16_t h) { return (h & 0x7c00) == 0x7c00; });
  };
  ASSERT_EQ(nan(alone), 0) << "wgmma_" << kAlone.name() << ": elements of C left unwritten (NaN)";
  EXPECT_EQ(nan(pair), 0) << what << ": elements of C left unwritten (NaN)";
  const auto first = std::mismatch(alone.begin(), alone.end(), pair.begin()).first;
  EXPECT_TRUE(first == alone.end()) << what << ": C differs first at element " << (first - alone.begin());
}

TEST(GemmGpu, WgmmaPairsWriteEveryTileOfALargeC) {
  KB_REQUIRE_GPU();
  if (std::string why = hopper_problem(); !why.empty()) GTEST_SKIP() << "wgmma: " << why;
  static_assert(kWgmmaConfigs.size() >= 6 && kWgmmaConfigs[4].cluster == 2 && kWgmmaConfigs[5].cluster == 2,
                "the pairs are entries 4 and 5, of entries 0 and 3's tiles");
  const DeviceBuffer a = pattern(0), b = pattern(7);
  expect_pair_like_alone<kWgmmaConfigs[0], kWgmmaConfigs[4]>(a, b);  // 128 x 256, 3 stages
  expect_pair_like_alone<kWgmmaConfigs[3], kWgmmaConfigs[5]>(a, b);  // 128 x 128, 6 stages
}

}  // namespace
}  // namespace kbench::gemm
