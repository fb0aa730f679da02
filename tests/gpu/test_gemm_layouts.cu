// The tensor-core kernel templates with transposed operands (gemm_mma.cuh kATrans, kBTrans;
// gemm_wgmma.cuh kAMajorM, !kBMajorN): A given as A^T [K, M] rows, B as B^T [N, K] rows, read
// through their strides, as a backward pass reads them; and the tf32 instantiation of the Hopper
// kernel, whose launcher transposes B first; and the swapped product (C^T = B^T . A^T, the
// Hopper kernel's <M-major, K-major> layout with B and A as its operands). Small integers make
// every product and float32 sum exact, so C must equal the host's product rounded once to the
// dtype (the product itself wherever it fits, as it does below K = 264); the tiles are ragged in
// M, N and K.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "device/device_limits.hpp"
#include "gpu_test.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_mma.cuh"
#include "kernels/gemm/gemm_wgmma.cuh"

namespace kbench::gemm {
namespace {

// The mma kernel at one tile shape and layout, as expect_exact's launcher.
template <bool kATrans, bool kBTrans, int BM, int BN, int WM, int WN>
auto mma(int m, int n, int k) {
  return [=](const __half* a, int lda, const __half* b, int ldb, __half* c) {
    return launch_mma_gemm<__half, BM, BN, 64, WM, WN, 3, kATrans, kBTrans>(a, b, c, m, n, k, lda, ldb, nullptr);
  };
}

// An element of the device's dtype as the host stores it: float16 bits, or a float; padding
// between rows is NaN, so that a kernel reading it shows.
template <class T>
struct HostElement {
  using Stored = std::uint16_t;
  static constexpr Stored kNan = 0x7e00;
  static Stored from(double v) { return float_to_half_bits(static_cast<float>(v)); }
  static double to(Stored s) { return half_bits_to_float(s); }
};
template <>
struct HostElement<float> {
  using Stored = float;
  static constexpr Stored kNan = std::numeric_limits<float>::quiet_NaN();
  static Stored from(double v) { return static_cast<float>(v); }
  static double to(Stored s) { return s; }
};

// The elements between stored rows of A, of B and of C. C's (for launchers that take its row
// stride, n + c, which the launch captures) are NaN beforehand and must stay NaN.
struct Pads {
  int a, b, c = 0;
  Pads(int both) : a(both), b(both) {}  // NOLINT: one pad for both operands is the common case
  Pads(int pa, int pb, int pc = 0) : a(pa), b(pb), c(pc) {}
};

// launch(a, lda, b, ldb, c) computes C [m, n] (row stride n + pad.c) from the operands as stored
// (elements of T).
template <bool kATrans, bool kBTrans, class T = __half, class Launch>
void expect_exact(int m, int n, int k, Pads pad, const char* what, Launch launch) {
  using E = HostElement<T>;
  using S = typename E::Stored;
  // Stored shapes: A [m, k] or A^T [k, m]; B [k, n] or B^T [n, k]; rows padded as `pad` says.
  const int a_rows = kATrans ? k : m, a_cols = kATrans ? m : k, b_rows = kBTrans ? n : k, b_cols = kBTrans ? k : n;
  const int lda = a_cols + pad.a, ldb = b_cols + pad.b, ldc = n + pad.c;
  std::vector<double> av(static_cast<std::size_t>(m) * k), bv(static_cast<std::size_t>(k) * n);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>((i * 7 + 3) % 9) - 4;
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>((i * 5 + 1) % 7) - 3;
  std::vector<S> ha(static_cast<std::size_t>(a_rows) * lda, E::kNan), hb(static_cast<std::size_t>(b_rows) * ldb, E::kNan);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j)
      ha[kATrans ? static_cast<std::size_t>(j) * lda + i : static_cast<std::size_t>(i) * lda + j] =
          E::from(av[static_cast<std::size_t>(i) * k + j]);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < n; ++j)
      hb[kBTrans ? static_cast<std::size_t>(j) * ldb + i : static_cast<std::size_t>(i) * ldb + j] =
          E::from(bv[static_cast<std::size_t>(i) * n + j]);
  DeviceBuffer da(ha.size() * sizeof(S)), db(hb.size() * sizeof(S)), dc(static_cast<std::size_t>(m) * ldc * sizeof(S));
  KB_CUDA(cudaMemcpy(da.get(), ha.data(), da.size(), cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemcpy(db.get(), hb.data(), db.size(), cudaMemcpyHostToDevice));
  KB_CUDA(cudaMemset(dc.get(), 0xFF, dc.size()));
  KB_CUDA(launch(static_cast<const T*>(da.get()), lda, static_cast<const T*>(db.get()), ldb, static_cast<T*>(dc.get())));
  std::vector<S> got(static_cast<std::size_t>(m) * ldc);
  KB_CUDA(cudaMemcpy(got.data(), dc.get(), dc.size(), cudaMemcpyDeviceToHost));
  // The exact product, a row of C at a time (rows of B in order: K = 4160 at N = 4104 stays quick).
  std::vector<double> exact(static_cast<std::size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int q = 0; q < k; ++q) {
      const double x = av[static_cast<std::size_t>(i) * k + q];
      const double* const row = &bv[static_cast<std::size_t>(q) * n];
      double* const out = &exact[static_cast<std::size_t>(i) * n];
      for (int j = 0; j < n; ++j) out[j] += x * row[j];
    }
  int bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      // Rounded once to the dtype, as the kernels round their float32 sums (a no-op for the
      // sums below 2048 of short K; K = 4160 reaches sums a float16 cannot hold exactly).
      const double ref = E::to(E::from(exact[static_cast<std::size_t>(i) * n + j]));
      const double v = E::to(got[static_cast<std::size_t>(i) * ldc + j]);
      if (v != ref && bad++ < 3)
        ADD_FAILURE() << what << " A^T " << kATrans << " B^T " << kBTrans << " " << m << "x" << n << "x" << k << " at (" << i
                      << ", " << j << "): " << v << ", expected " << ref;
    }
  EXPECT_EQ(bad, 0);
  int written = 0;  // C's row padding the launch must leave alone
  for (int i = 0; i < m; ++i)
    for (int j = n; j < ldc; ++j)
      if (!std::isnan(E::to(got[static_cast<std::size_t>(i) * ldc + j])) && written++ < 3)
        ADD_FAILURE() << what << " " << m << "x" << n << "x" << k << " wrote C's padding at (" << i << ", " << j << ")";
  EXPECT_EQ(written, 0);
}

TEST(GemmGpu, TransposedOperandsThroughStrides) {
  KB_REQUIRE_GPU();
  // M, N and K multiples of 8 (every stored row 16-byte aligned), none a multiple of the tiles.
  for (const int pad : {0, 8}) {
    expect_exact<false, false>(136, 72, 88, pad, "mma 128x128", mma<false, false, 128, 128, 64, 64>(136, 72, 88));
    expect_exact<true, false>(136, 72, 88, pad, "mma 128x128", mma<true, false, 128, 128, 64, 64>(136, 72, 88));
    expect_exact<false, true>(136, 72, 88, pad, "mma 128x128", mma<false, true, 128, 128, 64, 64>(136, 72, 88));
    expect_exact<true, true>(136, 72, 88, pad, "mma 128x128", mma<true, true, 128, 128, 64, 64>(136, 72, 88));
    expect_exact<true, false>(200, 136, 264, pad, "mma 64x64", mma<true, false, 64, 64, 32, 32>(200, 136, 264));
    expect_exact<false, true>(200, 136, 264, pad, "mma 64x64", mma<false, true, 64, 64, 32, 32>(200, 136, 264));
  }
}

// The Hopper kernel in its four layouts at each tile width, on a grid of `blocks` persistent
// blocks: 3 makes each block walk several tiles and the stage ring wrap within and across them
// (K = 264 is five k-tiles, ragged); 132 gives every tile its own block.
// splits > 1 cuts K into that many ranges (split-K, their partials in a buffer of this test's).
template <bool kATrans, bool kBTrans, WgmmaConfig W>
void expect_wgmma_exact(int m, int n, int k, int pad, int blocks, int splits = 1) {
  const std::string what = "wgmma_" + W.name() + " splits " + std::to_string(splits);
  DeviceBuffer partials(splits > 1 ? static_cast<std::size_t>(splits) * m * n * sizeof(float) : 0);
  float* const p = static_cast<float*>(partials.get());
  expect_exact<kATrans, kBTrans>(m, n, k, pad, what.c_str(), [=](const __half* a, int lda, const __half* b, int ldb, __half* c) {
    return launch_wgmma_gemm<__half, W, kATrans, !kBTrans>(a, lda, b, ldb, c, m, n, k, blocks, nullptr, splits, p);
  });
}

// N = 328 stores C through TMA (where the configuration does), N = 74 from registers (its rows
// are not whole 16-byte chunks; B must then be given transposed, its rows K long, for TMA to
// load it). Pairs (cluster 2) take B as given only; M = 300 is three tiles, so the second
// pair's lower block has no rows to compute.
template <WgmmaConfig W>
void expect_wgmma_layouts(int pad, int blocks) {
  expect_wgmma_exact<false, false, W>(200, 328, 264, pad, blocks);
  expect_wgmma_exact<true, false, W>(200, 328, 264, pad, blocks);
  expect_wgmma_exact<false, false, W>(136, 72, 88, pad, blocks);  // below one tile in M and N
  expect_wgmma_exact<false, false, W>(300, 328, 264, pad, blocks);
  // Split-K: 264 is five k-tiles; 3 ranges of 2, 2 and 1, 7 of one each and two empty ones.
  expect_wgmma_exact<false, false, W>(200, 328, 264, pad, blocks, 3);
  expect_wgmma_exact<false, false, W>(300, 328, 264, pad, blocks, 7);
  if constexpr (W.cluster == 1) {
    expect_wgmma_exact<false, true, W>(200, 328, 264, pad, blocks);
    expect_wgmma_exact<true, true, W>(200, 328, 264, pad, blocks);
    expect_wgmma_exact<false, true, W>(136, 74, 88, pad, blocks);
    expect_wgmma_exact<true, true, W>(136, 74, 264, pad, blocks, 3);
  }
}

TEST(GemmGpu, WgmmaLayoutsTilesAndPersistentGrid) {
  KB_REQUIRE_GPU();
  if (std::string why = hopper_problem(); !why.empty()) {  // elsewhere the launcher must refuse
    const DeviceTensor t{nullptr, DType::f16, 64, 64, 64};
    try {
      launch_wgmma(0, t, t, t, nullptr);
      ADD_FAILURE() << "launch_wgmma ran where " << why;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("sm_90"), std::string::npos) << e.what();
    }
    return;
  }
  // Below, one line per configuration but the stream-K ones (10 and 11: A and B as given only,
  // test_gemm_stream_k.cu).
  static_assert(kWgmmaConfigs.size() == 12 && kWgmmaConfigs[10].streamk && kWgmmaConfigs[11].streamk);
  for (const int pad : {0, 8})
    for (const int blocks : {3, 132}) {  // 3: one pair of the clustered configurations
      expect_wgmma_layouts<kWgmmaConfigs[0]>(pad, blocks);
      expect_wgmma_layouts<kWgmmaConfigs[1]>(pad, blocks);
      expect_wgmma_layouts<kWgmmaConfigs[2]>(pad, blocks);
      expect_wgmma_layouts<kWgmmaConfigs[3]>(pad, blocks);
      expect_wgmma_layouts<kWgmmaConfigs[4]>(pad, blocks);
      expect_wgmma_layouts<kWgmmaConfigs[5]>(pad, blocks);
      expect_wgmma_layouts<kWgmmaConfigs[6]>(pad, blocks);  // the cluster's split-K: K in 4 whatever splits says
      expect_wgmma_layouts<kWgmmaConfigs[7]>(pad, blocks);  // in 2
      expect_wgmma_layouts<kWgmmaConfigs[8]>(pad, blocks);  // and in 3 (128 rows summed as 42, 43 and 43)
      expect_wgmma_layouts<kWgmmaConfigs[9]>(pad, blocks);  // 128 x 64 in 2
    }
}

// The swapped product (launch_wgmma_swap: the kernel at configuration W in its <M-major A,
// K-major B> layout on B and A; with one split C^T's tiles stored transposed into C by the
// kernel, with several float32 partials [splits][N][M] summed and transposed into C by each
// tile's last unit) on a grid of `blocks`: the partials are NaN before each launch, so that a
// unit that leaves its slice unwritten, or a sum that reads a slice before it is written, shows.
// The counters are zeroed once, as the harness zeroes a workspace, and the product runs twice on
// them: a counter left set would leave the second launch's C unwritten (NaN), and every counter
// must be zero at the end. A is given as [M, K], B as [K, N] and C as [M, N], rows padded as
// `pad` says.
template <WgmmaConfig W>
void expect_wgmma_swap_exact(int m, int n, int k, Pads pad, int blocks, int splits) {
  const std::string what = "wgmma_swap " + W.name() + " splits " + std::to_string(splits) + " blocks " + std::to_string(blocks);
  const std::size_t partial_bytes = static_cast<std::size_t>(splits) * m * n * sizeof(float);
  const auto tiles = static_cast<std::size_t>(wgmma_swap_tiles(W, m, n));
  DeviceBuffer partials(partial_bytes), counters = DeviceBuffer::zeroed(tiles * sizeof(unsigned));
  float* const p = static_cast<float*>(partials.get());
  auto* const done = static_cast<unsigned*>(counters.get());
  for (int launch = 0; launch < 2; ++launch)
    expect_exact<false, false>(m, n, k, pad, what.c_str(), [=](const __half* a, int lda, const __half* b, int ldb, __half* c) {
      KB_CUDA(cudaMemset(p, 0xFF, partial_bytes));
      return launch_wgmma_swap<__half, W>(a, lda, b, ldb, c, n + pad.c, m, n, k, blocks, nullptr, splits, p, done);
    });
  std::vector<unsigned> left(tiles);
  KB_CUDA(cudaMemcpy(left.data(), done, tiles * sizeof(unsigned), cudaMemcpyDeviceToHost));
  EXPECT_EQ(std::count(left.begin(), left.end(), 0u), static_cast<std::ptrdiff_t>(tiles)) << what << ": counters left set";
}

// Both configurations (the narrow one, which the launcher takes up to M = 16, is correct at any M
// too). M from a decode step's 1 to beyond one 64-wide tile of M (100, 128: two; 300: five, the
// last ragged; 7: under one narrow tile of 16), odd and even (the partials' paired and single
// stores); N ragged against the 128-row tiles (4104 = 32 x 128 + 8; 200; 72, under one tile); K
// ragged against 64 (4160: 65 k-tiles; 100: two, the second partial; 264: five). Splits of one
// (C^T's tiles stored transposed into C by the kernel: M = 1, 7, 100, 128, 300) and several, some
// ranges empty (7 of 100's two k-tiles: five empty; 16 of 4160's 65: ranges of 5, the last three
// empty). K = 100 needs A's rows padded to whole 16-byte chunks (4 more elements), as TMA's
// strides must be. On the grid of 132, C's rows are padded by 5 (an odd row stride, and 5
// elements past N in each row that both stores, the one-split and the last unit's, must leave
// alone). At 3 blocks each block's units span several tiles and splits, so which unit of a tile
// counts last varies.
TEST(GemmGpu, WgmmaSwapAtDecodeAndRaggedShapes) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  struct Shape {
    int m, n, k, splits;
  };
  const Shape shapes[] = {{1, 4104, 4160, 1},  {1, 4104, 4160, 4},  {7, 4104, 100, 1},   {7, 200, 100, 7},
                          {16, 4104, 4160, 3}, {16, 72, 4160, 16},  {100, 200, 4160, 1}, {100, 200, 4160, 7},
                          {128, 4104, 264, 1}, {128, 4104, 264, 3}, {300, 200, 100, 2},  {300, 72, 4160, 1}};
  for (const int blocks : {3, 132})
    for (const Shape& s : shapes) {
      const int row_pad = s.k % 8 == 0 ? 0 : 8 - s.k % 8;  // A's rows to whole 16-byte chunks
      const Pads pad = blocks == 3 ? Pads(row_pad, 0) : Pads(row_pad + 8, 8, 5);
      expect_wgmma_swap_exact<kWgmmaSwapConfig>(s.m, s.n, s.k, pad, blocks, s.splits);
      expect_wgmma_swap_exact<kWgmmaSwapNarrowConfig>(s.m, s.n, s.k, pad, blocks, s.splits);
    }
}

// Through the registry's launcher: the splits wgmma_swap_splits asks for, as far as the
// workspace holds them before the counters at its end (4 in the full workspace; one slice, or
// two slices and less than the counters: 1; two slices and the counters: 2), each workspace
// zeroed once and launched on twice; and a refusal below one slice.
TEST(GemmGpu, WgmmaSwapTakesTheSplitsItsWorkspaceHolds) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  const int m = 16, n = 4104, k = 4160;  // 33 tiles: 4 splits on 132 multiprocessors
  const std::size_t slice = static_cast<std::size_t>(m) * n * sizeof(float), counters = wgmma_swap_counters_bytes(m, n);
  const int sms = current_device_limits().sms;
  ASSERT_EQ(wgmma_swap_splits(m, n, k, sms), 4);
  struct Held {
    std::size_t bytes;
    int splits;
  };
  for (const Held held : {Held{wgmma_swap_workspace_bytes(m, n, k), 4}, Held{slice, 1}, Held{2 * slice + 4, 1},
                          Held{2 * slice + counters, 2}, Held{3 * slice + counters + 2, 3}}) {
    EXPECT_EQ(wgmma_swap_workspace_splits(m, n, k, sms, held.bytes), held.splits) << held.bytes << " bytes";
    const DeviceBuffer workspace = DeviceBuffer::zeroed(held.bytes);
    const std::string what = "wgmma_swap, workspace of " + std::to_string(held.bytes) + " bytes";
    for (int launch = 0; launch < 2; ++launch)
      expect_exact<false, false>(m, n, k, 0, what.c_str(), [&](const __half* a, int lda, const __half* b, int ldb, __half* c) {
        const DeviceTensor ta{const_cast<__half*>(a), DType::f16, m, k, lda}, tb{const_cast<__half*>(b), DType::f16, k, n, ldb};
        const DeviceTensor tc{c, DType::f16, m, n, n};
        launch_wgmma_swap(ta, tb, tc, nullptr, workspace.get(), held.bytes);
        return cudaGetLastError();
      });
  }
  DeviceBuffer operands(3 * 128), workspace(8 * 8 * sizeof(float));
  auto* const base = static_cast<char*>(operands.get());
  const DeviceTensor sa{base, DType::f16, 8, 8, 8}, sb{base + 128, DType::f16, 8, 8, 8}, sc{base + 256, DType::f16, 8, 8, 8};
  try {
    launch_wgmma_swap(sa, sb, sc, nullptr, workspace.get(), workspace.size() - 4);
    ADD_FAILURE() << "wgmma_swap ran with less workspace than one slice";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("workspace"), std::string::npos) << e.what();
  }
}

// The tf32 instantiation (K-major A and B^T: 32 floats of K a stage) on a grid of `blocks`, B
// given transposed as its launcher leaves it in the workspace. K = 264 is nine k-tiles of 32,
// ragged; N = 328 stores C through TMA where the configuration does, N = 74 from registers.
template <WgmmaConfig W>
void expect_wgmma_tf32_tiles(int pad, int blocks) {
  const auto run = [&](int m, int n, int k, int splits) {
    const std::string what = "wgmma_tf32_" + W.name() + " splits " + std::to_string(splits);
    DeviceBuffer partials(splits > 1 ? static_cast<std::size_t>(splits) * m * n * sizeof(float) : 0);
    float* const p = static_cast<float*>(partials.get());
    expect_exact<false, true, float>(m, n, k, pad, what.c_str(), [=](const float* a, int lda, const float* b, int ldb, float* c) {
      return launch_wgmma_gemm<float, W, false, false>(a, lda, b, ldb, c, m, n, k, blocks, nullptr, splits, p);
    });
  };
  run(200, 328, 264, 1);
  run(136, 72, 88, 1);  // below one tile in M and N
  run(300, 328, 264, 1);
  run(136, 74, 264, 1);
  run(200, 328, 264, 3);  // split-K: nine k-tiles in ranges of 3
  run(300, 328, 264, 7);  // ranges of 2, the last of them empty
}

TEST(GemmGpu, WgmmaTf32TilesAndPersistentGrid) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  static_assert(kWgmmaTf32Configs.size() == 3, "one line below per configuration");
  for (const int pad : {0, 4})
    for (const int blocks : {3, 132}) {
      expect_wgmma_tf32_tiles<kWgmmaTf32Configs[0]>(pad, blocks);
      expect_wgmma_tf32_tiles<kWgmmaTf32Configs[1]>(pad, blocks);
      expect_wgmma_tf32_tiles<kWgmmaTf32Configs[2]>(pad, blocks);
    }
}

// Through launch_wgmma_tf32: B as given ([K, N], any row stride) is transposed into the
// workspace first, A read through its row stride; a workspace too small for B^T is refused.
TEST(GemmGpu, WgmmaTf32TransposesBThroughItsStride) {
  KB_REQUIRE_GPU();
  if (!hopper_problem().empty()) GTEST_SKIP() << hopper_problem();
  for (std::size_t i = 0; i < kWgmmaTf32Configs.size(); ++i)
    for (const Pads pad : {Pads(0), Pads(4), Pads(4, 3)}) {  // 3: B's rows on no 16-byte boundary, which the transpose does not mind
      // N = 330: C's rows not whole 16-byte chunks (the register epilogue); K = 268 ragged.
      const int m = 200, n = 330, k = 268;
      const std::size_t bytes = wgmma_tf32_workspace_bytes(i, m, n, k);
      DeviceBuffer workspace(bytes);
      const std::string what = "wgmma_tf32_" + kWgmmaTf32Configs[i].name() + " pads " + std::to_string(pad.a) + ", " + std::to_string(pad.b);
      expect_exact<false, false, float>(m, n, k, pad, what.c_str(), [&](const float* a, int lda, const float* b, int ldb, float* c) {
        const DeviceTensor ta{const_cast<float*>(a), DType::f32, m, k, lda}, tb{const_cast<float*>(b), DType::f32, k, n, ldb};
        const DeviceTensor tc{c, DType::f32, m, n, n};
        launch_wgmma_tf32(i, ta, tb, tc, nullptr, workspace.get(), bytes);
        return cudaGetLastError();
      });
      // Three separate 8 x 8 operands (one tensor as all three would be refused for C overlapping A
      // before the workspace is looked at), and 16 bytes where B^T needs 256.
      DeviceBuffer small(3 * 256);
      auto* const base = static_cast<char*>(small.get());
      const DeviceTensor sa{base, DType::f32, 8, 8, 8}, sb{base + 256, DType::f32, 8, 8, 8}, sc{base + 512, DType::f32, 8, 8, 8};
      try {
        launch_wgmma_tf32(i, sa, sb, sc, nullptr, workspace.get(), 16);
        ADD_FAILURE() << what << ": ran with 16 bytes of workspace";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("workspace for B^T"), std::string::npos) << e.what();
      }
    }
}

}  // namespace
}  // namespace kbench::gemm
