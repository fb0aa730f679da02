// Split-K's in-kernel sum (gemm_wgmma.cuh's sum_splits_if_last), in both products that use it:
// the forward (launch_wgmma_gemm at several splits, every configuration of kWgmmaConfigs, C
// row-major) and the swapped one (launch_wgmma_swap, C stored transposed). Each tile's last unit
// sums the float32 partial slices in split order from 0.f and rounds once to the dtype,
// whichever unit comes last. The slices stay in the workspace after the launch, so the host can
// redo that sum: C must equal it bit for bit. The inputs make the order show: K is cut into
// ranges of 256 (K = 256 x splits), and range 0 gives every partial +2^18, range 1 -2^18 (A = 1,
// B = +-1024: exact in float32), the others a sum s of products of fine fractions. In order,
// (2^18 - 2^18) + s is s; summed last to first, s + -2^18 + 2^18 is s rounded to float32's step
// at 2^18 (2^-5), which float16 resolves for |s| < 32: the negative control
// (Fault::reverse_split_order) must differ from the host's sum. (The oracle check's tolerance
// cannot tell the orders apart; test_gemm_negative_controls.cu has the counter's.) And the
// registered variants (wgmma_swap, each wgmma_<tile>, and auto, which may take any) through the
// harness's check at shapes they split, M from 1 to 300: the oracle, then a second launch on the
// same workspace, which a counter left set would leave unwritten.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/rng.hpp"
#include "device/device_limits.hpp"
#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_op.hpp"
#include "kernels/gemm/gemm_wgmma.cuh"
#include "registry/registry.hpp"

namespace kbench::gemm {
namespace {

struct Shape {
  int m, n, splits;
};

// Elements of K range r: +-1024 in B against ones in A for r = 0 and 1, fractions i / 1024 (exact
// in float16) otherwise.
double a_value(int k, std::uint32_t i) { return k < 512 ? 1.0 : static_cast<double>(static_cast<int>(i % 2047) - 1023) / 1024; }
double b_value(int k, std::uint32_t i) {
  if (k < 256) return 1024;
  if (k < 512) return -1024;
  return static_cast<double>(static_cast<int>(i % 2039) - 1019) / 1024;
}

// Launches the swap (kSwap) or the forward at configuration W with fault F on a grid of `blocks`
// and counts the elements of C that differ from the host's in-order sum of the partials the
// launch left ([splits][N][M] for the swap, [splits][M][N] for the forward).
template <WgmmaConfig W, Fault F, bool kSwap = true>
int differences_from_ordered_sum(const Shape& s, int blocks) {
  const int m = s.m, n = s.n, k = 256 * s.splits;
  std::vector<std::uint16_t> ha(static_cast<std::size_t>(m) * k), hb(static_cast<std::size_t>(k) * n);
  for (std::size_t i = 0; i < ha.size(); ++i)
    ha[i] = float_to_half_bits(static_cast<float>(a_value(static_cast<int>(i % k), static_cast<std::uint32_t>(i * 2654435761u))));
  for (std::size_t i = 0; i < hb.size(); ++i)
    hb[i] = float_to_half_bits(static_cast<float>(b_value(static_cast<int>(i / n), static_cast<std::uint32_t>(i * 40503u + 7))));
  const std::size_t slice = static_cast<std::size_t>(m) * n;
  DeviceBuffer da(ha.size() * 2), db(hb.size() * 2), dc(slice * 2), partials(s.splits * slice * sizeof(float));
  const std::int64_t tiles = kSwap ? wgmma_swap_tiles(W, m, n) : wgmma_tiles(W, m, n);
  const DeviceBuffer counters = DeviceBuffer::zeroed(static_cast<std::size_t>(tiles) * sizeof(unsigned));
  KB_CUDA(cudaMemcpy(da.get(), ha.data(), da.size(), cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemcpy(db.get(), hb.data(), db.size(), cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemset(dc.get(), 0xFF, dc.size()));
  KB_CUDA(cudaMemset(partials.get(), 0xFF, partials.size()));
  const auto* const a = static_cast<const __half*>(da.get());
  const auto* const b = static_cast<const __half*>(db.get());
  auto* const c_out = static_cast<__half*>(dc.get());
  auto* const p_out = static_cast<float*>(partials.get());
  auto* const done = static_cast<unsigned*>(counters.get());
  if constexpr (kSwap)
    KB_CUDA((launch_wgmma_swap<__half, W, F>(a, k, b, n, c_out, n, m, n, k, blocks, nullptr, s.splits, p_out, done)));
  else
    KB_CUDA((launch_wgmma_gemm<__half, W, false, true, F>(a, k, b, n, c_out, m, n, k, blocks, nullptr, s.splits, p_out, done)));
  KB_CUDA(cudaDeviceSynchronize());
  std::vector<float> p(s.splits * slice);
  std::vector<std::uint16_t> c(slice);
  KB_CUDA(cudaMemcpy(p.data(), partials.get(), partials.size(), cudaMemcpyDeviceToHost));
  KB_CUDA(cudaMemcpy(c.data(), dc.get(), dc.size(), cudaMemcpyDeviceToHost));
  // The inputs' premise: ranges 0 and 1 give exactly +-2^18.
  EXPECT_EQ(p[0], 262144.f);
  EXPECT_EQ(p[slice], -262144.f);
  int differ = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0.f;
      const std::size_t at = kSwap ? static_cast<std::size_t>(j) * m + i : static_cast<std::size_t>(i) * n + j;
      for (int q = 0; q < s.splits; ++q) sum += p[q * slice + at];
      differ += c[static_cast<std::size_t>(i) * n + j] != float_to_half_bits(sum);
    }
  return differ;
}

// M from 1 to 128 (one narrow tile, several of them, two wide ones), N ragged against the 128-row
// tiles (4104 = 32 x 128 + 8; 200), 3 and 4 splits; grids of 3 blocks (each walks units of
// several tiles, so the last unit of a tile is any of its splits) and 132.
const Shape kShapes[] = {{1, 4104, 3}, {16, 4104, 4}, {7, 200, 3}, {100, 200, 4}, {128, 4104, 3}};

TEST(GemmGpu, WgmmaSwapSumsItsSplitsInOrder) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  for (const int blocks : {3, 132})
    for (const Shape& s : kShapes) {
      const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + " splits " + std::to_string(s.splits) +
                               " blocks " + std::to_string(blocks);
      EXPECT_EQ((differences_from_ordered_sum<kWgmmaSwapNarrowConfig, Fault::none>(s, blocks)), 0) << "narrow " << what;
      EXPECT_EQ((differences_from_ordered_sum<kWgmmaSwapConfig, Fault::none>(s, blocks)), 0) << what;
    }
}

// The negative control: the same sum last to first must differ (at most elements, by the inputs'
// design; one is enough to fail).
TEST(GemmGpu, WgmmaSwapSplitOrderCheckRejectsAReversedSum) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  for (const Shape& s : kShapes) {
    EXPECT_GT((differences_from_ordered_sum<kWgmmaSwapNarrowConfig, Fault::reverse_split_order>(s, 132)), 0) << s.m;
    EXPECT_GT((differences_from_ordered_sum<kWgmmaSwapConfig, Fault::reverse_split_order>(s, 132)), 0) << s.m;
  }
}

// The forward at every configuration of kWgmmaConfigs (128 x 128 to 128 x 256 tiles, C through
// TMA or from registers, pairs: their summed tiles all stored from registers, bounds-checked).
template <Fault F>
void forward_differences(const Shape& s, int blocks, bool expect_equal) {
  const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + " splits " + std::to_string(s.splits) +
                           " blocks " + std::to_string(blocks);
  static_assert(kWgmmaConfigs.size() == 6, "one line below per configuration");
  const int d[] = {differences_from_ordered_sum<kWgmmaConfigs[0], F, false>(s, blocks),
                   differences_from_ordered_sum<kWgmmaConfigs[1], F, false>(s, blocks),
                   differences_from_ordered_sum<kWgmmaConfigs[2], F, false>(s, blocks),
                   differences_from_ordered_sum<kWgmmaConfigs[3], F, false>(s, blocks),
                   differences_from_ordered_sum<kWgmmaConfigs[4], F, false>(s, blocks),
                   differences_from_ordered_sum<kWgmmaConfigs[5], F, false>(s, blocks)};
  for (std::size_t i = 0; i < kWgmmaConfigs.size(); ++i) {
    if (expect_equal) EXPECT_EQ(d[i], 0) << "wgmma_" << kWgmmaConfigs[i].name() << " " << what;
    else EXPECT_GT(d[i], 0) << "wgmma_" << kWgmmaConfigs[i].name() << " " << what;
  }
}

// The forward's shapes: those above and M = 300 (three 128-row tiles; a pair's lower block below
// M), N = 200 of one to two column tiles; at 3 blocks (one pair at cluster 2) each walks units of
// several tiles and splits.
const Shape kForwardShapes[] = {{1, 4104, 3}, {16, 4104, 4}, {7, 200, 3}, {100, 200, 4}, {128, 4104, 3}, {300, 200, 4}};

TEST(GemmGpu, WgmmaForwardSumsItsSplitsInOrder) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  for (const int blocks : {3, 132})
    for (const Shape& s : kForwardShapes) forward_differences<Fault::none>(s, blocks, true);
}

TEST(GemmGpu, WgmmaForwardSplitOrderCheckRejectsAReversedSum) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  for (const Shape& s : kForwardShapes) forward_differences<Fault::reverse_split_order>(s, 132, false);
}

// M = 1, 16 (narrow tiles), 33, 100 and 128 (one and two columns of 64-wide tiles); N ragged
// (4104, 2056) and not (4096); 2 to 7 splits on 132 multiprocessors (4, 4, 7, 2, 2); every row
// 16-byte aligned, so that the wgmma path, not simt, runs.
TEST(GemmGpu, WgmmaSwapSplitsPassTheCheckAndASecondLaunch) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  struct Mnk {
    std::int64_t m, n, k;
  };
  const Op& op = registry().op("gemm");
  for (const DType t : {DType::f16, DType::bf16})
    for (const Mnk s : {Mnk{1, 4104, 4160}, Mnk{16, 4096, 4096}, Mnk{33, 2056, 2048}, Mnk{100, 4104, 1024},
                        Mnk{128, 4104, 1024}}) {
      const Case c = make_case(op, t, {s.m, s.n, s.k});
      const int splits = wgmma_swap_workspace_splits(s.m, s.n, s.k, current_device_limits().sms,
                                                     wgmma_swap_workspace_bytes(s.m, s.n, s.k));
      EXPECT_GT(splits, 1) << case_label(c);
      Rng rng(11);
      const PreparedCase pc = prepare_case(op, c, rng);
      for (const char* name : {"wgmma_swap", "auto"}) {
        const CheckInfo info = check_variant(pc, registry().variant("gemm", name), nullptr);
        EXPECT_TRUE(info.passed) << case_label(c) << " " << name << " (" << splits << " splits): " << info.detail;
      }
    }
}

// The forward's splits through the registry: each wgmma_<tile> variant and auto (which tunes
// among them and the swap, on one workspace whose counters lie past every candidate's partials).
// M = 1 to 300 (one to three 128-row tiles), N ragged (4104, 2056, 1000) and not (4096, 1024); on
// 132 multiprocessors the 128 x 128 tile takes 4 splits at 1 x 4104 x 4160 and 128 x 4096 x 4096
// (decode), 16 at 16 x 1024 x 16384 (the cap), 2 at 33 x 4104 x 512 (ranges of 4 k-tiles), 3 at
// 200 x 2056 x 1024 and 5 at 300 x 1000 x 2048 (the others theirs; a failure prints them).
TEST(GemmGpu, WgmmaForwardSplitsPassTheCheckAndASecondLaunch) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  struct Mnk {
    std::int64_t m, n, k;
  };
  const Op& op = registry().op("gemm");
  const int sms = current_device_limits().sms;
  for (const DType t : {DType::f16, DType::bf16})
    for (const Mnk s : {Mnk{1, 4104, 4160}, Mnk{128, 4096, 4096}, Mnk{16, 1024, 16384}, Mnk{33, 4104, 512},
                        Mnk{200, 2056, 1024}, Mnk{300, 1000, 2048}}) {
      const Case c = make_case(op, t, {s.m, s.n, s.k});
      Rng rng(13);
      const PreparedCase pc = prepare_case(op, c, rng);
      for (std::size_t i = 0; i < kWgmmaConfigs.size(); ++i) {
        const int splits = wgmma_workspace_splits(i, s.m, s.n, s.k, sms, wgmma_workspace_bytes(i, s.m, s.n, s.k));
        EXPECT_GT(splits, 1) << case_label(c) << " wgmma_" << kWgmmaConfigs[i].name();
        const std::string name = "wgmma_" + kWgmmaConfigs[i].name();
        const CheckInfo info = check_variant(pc, registry().variant("gemm", name), nullptr);
        EXPECT_TRUE(info.passed) << case_label(c) << " " << name << " (" << splits << " splits): " << info.detail;
      }
      const CheckInfo info = check_variant(pc, registry().variant("gemm", "auto"), nullptr);
      EXPECT_TRUE(info.passed) << case_label(c) << " auto: " << info.detail;
    }
}

}  // namespace
}  // namespace kbench::gemm
