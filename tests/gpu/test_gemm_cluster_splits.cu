// The forward's split-K summed in thread-block clusters (WgmmaConfig::ksplit, gemm_wgmma.cuh's
// cluster_split_sum; wgmma_128x128_ks4, _ks3 and _ks2, wgmma_128x64_ks2): the ksplit blocks of a tile sum their float32 partial tiles
// through distributed shared memory in block order from 0.f and store C, in one kernel (at 3, the tile's 128 rows cut
// unevenly: 42, 43 and 43, each block's last chunks guarded).
//   - Against the exact product (small integers: every float32 sum exact), M = 1, 100, 128, 300
//     (one tile row below, at and beyond 128), N and K ragged against the tiles, B as given and
//     transposed, on 132 blocks and on one cluster that walks every tile (the stage ring reused
//     for the sum and loaded again, tile after tile). K = 264 is five k-tiles: at 4 ranges, 2, 2,
//     1 and an empty one; at 3, 2, 2 and 1.
//   - Bit for bit: two launches agree, and equal the reduce kernel's split-K (the same K ranges,
//     so the same float32 partials, summed in the same order from 0.f). The inputs make the order
//     show at 4 ranges, as test_gemm_swap_splits.cu's do: K = 1024 is four ranges of 256; range 0 gives every
//     partial +2^18, range 1 -2^18, ranges 2 and 3 sums of fine fractions, so that summed last to
//     first the fractions are rounded at 2^18's float32 step: the negative control
//     (Fault::reverse_split_order) must differ. At 3 ranges (6, 6 and 4 k-tiles: K 0-383, 384-767,
//     768-1023) range 0 gives +2^17 and range 1 -2^17 plus fractions, so range 2's fractions,
//     added to range 1's partial before range 0's, are rounded at 2^17's step: the order shows too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "gemm_inputs.hpp"
#include "gpu_test.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_wgmma.cuh"

namespace kbench::gemm {
namespace {

constexpr WgmmaConfig kClusterSplit4 = kWgmmaConfigs[6], kClusterSplit2 = kWgmmaConfigs[7],
                      kClusterSplit3 = kWgmmaConfigs[8], kClusterSplit2Narrow = kWgmmaConfigs[9];
static_assert(kClusterSplit4.ksplit == 4 && kClusterSplit2.ksplit == 2 && kClusterSplit3.ksplit == 3 &&
                  kClusterSplit2Narrow.ksplit == 2 && kClusterSplit2Narrow.bn == 64,
              "the 128 x 128 tile in clusters of 4, 2 and 3, the 128 x 64 one in clusters of 2");
// W's tile, its partials summed by wgmma_reduce_kernel.
template <WgmmaConfig W>
constexpr WgmmaConfig kReduceSplit{W.bn, 6};

// C [m, n] of small integers: A [m, k] (or A^T), B [k, n] (or B^T [n, k]), exact in float32.
template <WgmmaConfig W, bool kBTrans>
int exact_differences(int m, int n, int k, int blocks) {
  std::vector<std::uint16_t> ha(static_cast<std::size_t>(m) * k), hb(static_cast<std::size_t>(k) * n);
  std::vector<double> av(ha.size()), bv(hb.size());
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>((i * 7 + 3) % 9) - 4;
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>((i * 5 + 1) % 7) - 3;
  for (std::size_t i = 0; i < ha.size(); ++i) ha[i] = float_to_half_bits(static_cast<float>(av[i]));
  for (int q = 0; q < k; ++q)
    for (int j = 0; j < n; ++j)
      hb[kBTrans ? static_cast<std::size_t>(j) * k + q : static_cast<std::size_t>(q) * n + j] =
          float_to_half_bits(static_cast<float>(bv[static_cast<std::size_t>(q) * n + j]));
  DeviceBuffer da(ha.size() * 2), db(hb.size() * 2), dc(static_cast<std::size_t>(m) * n * 2);
  KB_CUDA(cudaMemcpy(da.get(), ha.data(), da.size(), cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemcpy(db.get(), hb.data(), db.size(), cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemset(dc.get(), 0xFF, dc.size()));  // NaN: an element left unwritten shows
  KB_CUDA((launch_wgmma_gemm<__half, W, false, !kBTrans>(
      static_cast<const __half*>(da.get()), k, static_cast<const __half*>(db.get()), kBTrans ? k : n,
      static_cast<__half*>(dc.get()), m, n, k, blocks, nullptr)));
  std::vector<std::uint16_t> c(static_cast<std::size_t>(m) * n);
  KB_CUDA(cudaMemcpy(c.data(), dc.get(), dc.size(), cudaMemcpyDeviceToHost));
  int bad = 0;
  std::vector<double> row(n);
  for (int i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int q = 0; q < k; ++q) {
      const double x = av[static_cast<std::size_t>(i) * k + q];
      for (int j = 0; j < n; ++j) row[j] += x * bv[static_cast<std::size_t>(q) * n + j];
    }
    for (int j = 0; j < n; ++j)  // rounded once to float16, as the kernel rounds its float32 sum
      if (c[static_cast<std::size_t>(i) * n + j] != float_to_half_bits(static_cast<float>(row[j])) && bad++ < 3)
        ADD_FAILURE() << "wgmma_" << W.name() << " B^T " << kBTrans << " " << m << "x" << n << "x" << k
                      << " blocks " << blocks << " at (" << i << ", " << j << "): "
                      << half_bits_to_float(c[static_cast<std::size_t>(i) * n + j]) << ", expected " << row[j];
  }
  return bad;
}

// Not a check: how many clusters of W fit at once here (after a launch has set the kernel's
// shared-memory limit). Fewer than 32 would run 128x4096's 32 tiles in two waves.
template <WgmmaConfig W>
void print_resident_clusters() {
  using G = WgmmaGemm<__half, W.bn, W.stages, false, 1, false, true, Fault::none, W.ksplit>;
  const int resident = resident_clusters(
      wgmma_gemm_kernel<__half, W.bn, W.stages, false, 1, false, true, false, Fault::none, W.ksplit>, W.ksplit,
      G::kThreads, G::kSmemBytes);
  std::cout << "wgmma_" << W.name() << ": " << resident << " clusters of " << W.ksplit << " resident\n";
}

template <WgmmaConfig W>
void expect_exact_products() {
  for (const int blocks : {132, static_cast<int>(W.ksplit)})  // one cluster walks every tile
    for (const int m : {1, 100, 128, 300}) {
      EXPECT_EQ((exact_differences<W, false>(m, 328, 1000, blocks)), 0);  // N: 2 tiles and 72; K: 15 k-tiles and 40
      EXPECT_EQ((exact_differences<W, false>(m, 200, 264, blocks)), 0);   // at 4 ranges, one of no k-tiles
      EXPECT_EQ((exact_differences<W, true>(m, 74, 1000, blocks)), 0);    // C's rows not whole 4-column stores
      EXPECT_EQ((exact_differences<W, true>(m, 330, 520, blocks)), 0);
    }
  print_resident_clusters<W>();
}

TEST(GemmGpu, WgmmaClusterSplitKMatchesTheExactProduct) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  expect_exact_products<kClusterSplit4>();
  expect_exact_products<kClusterSplit3>();
  expect_exact_products<kClusterSplit2>();
  expect_exact_products<kClusterSplit2Narrow>();
}

// C's bits from the cluster's split sum of W at fault F (launched twice: the second must give the
// same bits) and from the reduce kernel's split-K at as many ranges; the elements that differ.
// (At 2 ranges of 512 the first sums to 0 exactly: the order cannot show, but the bits must
// still be the reduce kernel's.)
template <WgmmaConfig W, Fault F>
int differences_from_reduce_kernel(int m, int n, int blocks) {
  constexpr int k = 1024;
  const std::vector<std::uint16_t> ha = test::split_order_a(m, k), hb = test::split_order_b(k, n);
  const std::size_t slice = static_cast<std::size_t>(m) * n;
  DeviceBuffer da(ha.size() * 2), db(hb.size() * 2), dc(slice * 2), dr(slice * 2),
      partials(W.ksplit * slice * sizeof(float));
  KB_CUDA(cudaMemcpy(da.get(), ha.data(), da.size(), cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemcpy(db.get(), hb.data(), db.size(), cudaMemcpyHostToDevice));
  const auto* const a = static_cast<const __half*>(da.get());
  const auto* const b = static_cast<const __half*>(db.get());
  std::vector<std::uint16_t> first(slice), second(slice), reduced(slice);
  for (std::vector<std::uint16_t>* out : {&first, &second}) {
    KB_CUDA(cudaMemset(dc.get(), 0xFF, dc.size()));
    KB_CUDA((launch_wgmma_gemm<__half, W, false, true, F>(a, k, b, n, static_cast<__half*>(dc.get()), m, n, k, blocks,
                                                          nullptr)));
    KB_CUDA(cudaMemcpy(out->data(), dc.get(), dc.size(), cudaMemcpyDeviceToHost));
  }
  KB_CUDA(cudaMemset(dr.get(), 0xFF, dr.size()));
  KB_CUDA((launch_wgmma_gemm<__half, kReduceSplit<W>, false, true>(a, k, b, n, static_cast<__half*>(dr.get()), m, n, k, 132,
                                                                nullptr, W.ksplit, static_cast<float*>(partials.get()))));
  KB_CUDA(cudaMemcpy(reduced.data(), dr.get(), dr.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(std::memcmp(first.data(), second.data(), slice * 2), 0) << "two launches, " << m << "x" << n;
  int differ = 0;
  for (std::size_t i = 0; i < slice; ++i) differ += first[i] != reduced[i];
  return differ;
}

TEST(GemmGpu, WgmmaClusterSplitKSumsInBlockOrderBitForBit) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  for (const int blocks : {132, 3})
    for (const int m : {1, 100, 128, 300})
      for (const int n : {4104, 200}) {
        EXPECT_EQ((differences_from_reduce_kernel<kClusterSplit4, Fault::none>(m, n, blocks)), 0)
            << "ks4 " << m << "x" << n << " blocks " << blocks;
        EXPECT_EQ((differences_from_reduce_kernel<kClusterSplit3, Fault::none>(m, n, blocks)), 0)
            << "ks3 " << m << "x" << n << " blocks " << blocks;
        EXPECT_EQ((differences_from_reduce_kernel<kClusterSplit2, Fault::none>(m, n, blocks)), 0)
            << "ks2 " << m << "x" << n << " blocks " << blocks;
        EXPECT_EQ((differences_from_reduce_kernel<kClusterSplit2Narrow, Fault::none>(m, n, blocks)), 0)
            << "128x64_ks2 " << m << "x" << n << " blocks " << blocks;
      }
}

// The negative control: summed last to first, the bits must differ from the reduce kernel's.
TEST(GemmGpu, WgmmaClusterSplitKOrderCheckRejectsAReversedSum) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  for (const int m : {1, 128}) {
    EXPECT_GT((differences_from_reduce_kernel<kClusterSplit4, Fault::reverse_split_order>(m, 4104, 132)), 0) << m;
    EXPECT_GT((differences_from_reduce_kernel<kClusterSplit3, Fault::reverse_split_order>(m, 4104, 132)), 0) << m;
  }
}

}  // namespace
}  // namespace kbench::gemm
