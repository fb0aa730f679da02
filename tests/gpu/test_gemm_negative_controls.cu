// Negative controls for gemm's oracle check: the tensor-core kernel templates of gemm_mma.cuh
// and (on sm_90) gemm_wgmma.cuh, forward and swapped (launch_wgmma_swap: C^T = B^T . A^T, at
// three splits its partials summed and transposed into C by each tile's last unit, at one its
// tiles stored transposed into C by the kernel), instantiated here, in the test binary only, with
// one defect each (gemm::Fault):
//   - half_accumulator: float16 partial sums (mma .f16 accumulators; wgmma's rounded to float16
//     after every k16 step), on the 2050 case;
//   - drop_k_tail: the last, partial K tile is never loaded (K = 200, BK = 64);
//   - skip_tile: one block of the grid returns without writing its tile (the swap's at three
//     splits: none of the tile's units writes or counts, so no unit sums it and its part of C
//     is left as the check's NaN, as at one split);
//   - keep_split_counter (the swap at three splits alone): the tile's last unit leaves its
//     counter set, so the next launch on the workspace never finds its last unit and leaves C
//     unwritten: the check's second launch on the same workspace must see different bits. (A sum
//     out of split order is within the oracle's tolerance; test_gemm_swap_splits.cu catches it.)
// Each must fail the check, and the same instantiation without the defect must pass the same
// prepared case, so that it is the defect the check sees.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "gemm_inputs.hpp"
#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_mma.cuh"
#include "kernels/gemm/gemm_op.hpp"
#include "kernels/gemm/gemm_wgmma.cuh"

namespace kbench::gemm {
namespace {

// wgmma_swap_direct: the swap at one split (C from the kernel, transposed), the same instantiation.
enum class Kernel { mma, wgmma, wgmma_swap, wgmma_swap_direct };

// The swapped product's partials: 3 splits of M x N floats, so that K is cut as well; then a
// counter a tile.
constexpr int kSwapSplits = 3;
std::size_t swap_partial_bytes(const Case& c) {
  return static_cast<std::size_t>(kSwapSplits * m_of(c) * n_of(c)) * sizeof(float);
}

template <Kernel K, Fault F>
Launchable control() {
  constexpr bool kSwap = K == Kernel::wgmma_swap || K == Kernel::wgmma_swap_direct;
  constexpr int kSplits = K == Kernel::wgmma_swap ? kSwapSplits : 1;
  Launchable v;
  v.name = "control";
  if constexpr (kSwap)
    v.workspace_bytes = [](const Case& c) {
      return swap_partial_bytes(c) + static_cast<std::size_t>(wgmma_swap_tiles(kWgmmaSwapConfig, m_of(c), n_of(c))) * sizeof(unsigned);
    };
  v.launch = [](const LaunchArgs& x) {
    const DeviceTensor &a = x.inputs[0], &b = x.inputs[1], &c = x.outputs[0];
    const int m = static_cast<int>(c.rows), n = static_cast<int>(c.cols), k = static_cast<int>(a.cols);
    if constexpr (K == Kernel::mma)
      KB_CUDA((launch_mma_gemm<__half, 64, 64, 64, 32, 32, 3, false, false, F>(
          a.as<const __half>(), b.as<const __half>(), c.as<__half>(), m, n, k, a.row_stride, b.row_stride, x.stream)));
    else if constexpr (kSwap)
      KB_CUDA((launch_wgmma_swap<__half, kWgmmaSwapConfig, F>(a.as<const __half>(), a.row_stride, b.as<const __half>(),
                                                             b.row_stride, c.as<__half>(), c.row_stride, m, n, k, 132,
                                                             x.stream, kSplits, static_cast<float*>(x.workspace),
                                                             reinterpret_cast<unsigned*>(static_cast<char*>(x.workspace) +
                                                                                         swap_partial_bytes(x.c)))));
    else  // 128 x 128 tiles, so that the skipped-tile case has several
      KB_CUDA((launch_wgmma_gemm<__half, WgmmaConfig{128, 4}, false, true, F>(a.as<const __half>(), a.row_stride, b.as<const __half>(),
                                                                b.row_stride, c.as<__half>(), m, n, k, 132, x.stream)));
  };
  return v;
}

template <Kernel K>
void expect_caught(const Launchable& broken, const Case& c, const InputTweak& tweak, const char* what) {
  const Op& op = registry().op("gemm");
  Rng rng(21);
  const PreparedCase pc = prepare_case(op, c, rng, tweak);
  const CheckInfo intact = check_variant(pc, control<K, Fault::none>(), nullptr);
  EXPECT_TRUE(intact.passed) << what << ", intact: " << intact.detail;
  const CheckInfo info = check_variant(pc, broken, nullptr);
  EXPECT_FALSE(info.passed) << what << ": the broken kernel passed";
}

// Each defect on every kernel (the wgmma ones where the device runs them).
template <Fault F>
void expect_caught_everywhere(const Case& c, const InputTweak& tweak, const char* what) {
  expect_caught<Kernel::mma>(control<Kernel::mma, F>(), c, tweak, what);
  if (!hopper_problem().empty()) return;
  expect_caught<Kernel::wgmma>(control<Kernel::wgmma, F>(), c, tweak, what);
  expect_caught<Kernel::wgmma_swap>(control<Kernel::wgmma_swap, F>(), c, tweak, what);
  expect_caught<Kernel::wgmma_swap_direct>(control<Kernel::wgmma_swap_direct, F>(), c, tweak, what);
}

TEST(GemmGpu, CheckerRejectsAHalfAccumulator) {
  KB_REQUIRE_GPU();
  expect_caught_everywhere<Fault::half_accumulator>(Case{"gemm", DType::f16, {64, 64, 48}}, test::fill_2050,
                                                    "float16 accumulator");
}

TEST(GemmGpu, CheckerRejectsADroppedKTail) {
  KB_REQUIRE_GPU();
  expect_caught_everywhere<Fault::drop_k_tail>(Case{"gemm", DType::f16, {96, 136, 200}}, {}, "dropped K tail");
}

TEST(GemmGpu, CheckerRejectsASkippedTile) {
  KB_REQUIRE_GPU();
  expect_caught_everywhere<Fault::skip_tile>(Case{"gemm", DType::f16, {192, 192, 128}}, {}, "skipped tile");
}

// The swap's split counter left set: the first launch is right, the second (the check's, on the
// same workspace) finds no last unit. 33 x 2 tiles of the swap (N = 4104, M = 100), K = 1000 cut
// into three ranges of 384, 384 and 232.
TEST(GemmGpu, CheckerRejectsASplitCounterLeftSet) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  expect_caught<Kernel::wgmma_swap>(control<Kernel::wgmma_swap, Fault::keep_split_counter>(),
                                    Case{"gemm", DType::f16, {100, 4104, 1000}}, {}, "split counter left set");
}

}  // namespace
}  // namespace kbench::gemm
