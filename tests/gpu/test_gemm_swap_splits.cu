// The swapped product's in-kernel split sum (launch_wgmma_swap at several splits,
// gemm_wgmma.cuh): each tile's last unit sums the float32 partial slices in split order from 0.f
// and rounds once to the dtype, whichever unit comes last. The slices stay in the workspace after
// the launch, so the host can redo that sum: C must equal it bit for bit. The inputs make the
// order show: K is cut into ranges of 256 (K = 256 x splits), and range 0 gives every partial
// +2^18, range 1 -2^18 (A = 1, B = +-1024: exact in float32), the others a sum s of products of
// fine fractions. In order, (2^18 - 2^18) + s is s; summed last to first, s + -2^18 + 2^18 is s
// rounded to float32's step at 2^18 (2^-5), which float16 resolves for |s| < 32: the negative
// control (Fault::reverse_split_order) must differ from the host's sum. (The oracle check's
// tolerance cannot tell the orders apart; test_gemm_negative_controls.cu has the counter's.)
// And the registered variant (and auto, which may take it) through the harness's check at decode
// shapes it splits, M up to 128: the oracle, then a second launch on the same workspace, which a
// counter left set would leave unwritten.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/rng.hpp"
#include "device/device_limits.hpp"
#include "gemm_inputs.hpp"
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

// Launches the swap at configuration W with fault F on a grid of `blocks` and counts the elements
// of C that differ from the host's in-order sum of the partials the launch left.
template <WgmmaConfig W, Fault F>
int differences_from_ordered_sum(const Shape& s, int blocks) {
  const int m = s.m, n = s.n, k = 256 * s.splits;
  const std::vector<std::uint16_t> ha = test::split_order_a(m, k), hb = test::split_order_b(k, n);
  const std::size_t slice = static_cast<std::size_t>(m) * n;
  DeviceBuffer da(ha.size() * 2), db(hb.size() * 2), dc(slice * 2), partials(s.splits * slice * sizeof(float));
  const DeviceBuffer counters = DeviceBuffer::zeroed(static_cast<std::size_t>(wgmma_swap_tiles(W, m, n)) * sizeof(unsigned));
  KB_CUDA(cudaMemcpy(da.get(), ha.data(), da.size(), cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemcpy(db.get(), hb.data(), db.size(), cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemset(dc.get(), 0xFF, dc.size()));
  KB_CUDA(cudaMemset(partials.get(), 0xFF, partials.size()));
  KB_CUDA((launch_wgmma_swap<__half, W, F>(static_cast<const __half*>(da.get()), k, static_cast<const __half*>(db.get()), n,
                                           static_cast<__half*>(dc.get()), n, m, n, k, blocks, nullptr, s.splits,
                                           static_cast<float*>(partials.get()), static_cast<unsigned*>(counters.get()))));
  KB_CUDA(cudaDeviceSynchronize());
  std::vector<float> p(s.splits * slice);  // [splits][N][M]
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
      for (int q = 0; q < s.splits; ++q) sum += p[q * slice + static_cast<std::size_t>(j) * m + i];
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

}  // namespace
}  // namespace kbench::gemm
