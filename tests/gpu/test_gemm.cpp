// gemm on the GPU: every variant (each tile configuration among them) against the FP64 oracle on
// ragged and square shapes, K = 1024 and K = 0, the 2048 + 1 + 1 = 2050 case that only a float32
// accumulator passes, sampled rows of a large case, strided operands, the autotuner's plan,
// and the launch contracts on device buffers. Under racecheck, cuBLAS's variants are left out
// (vendor_gemms.hpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "core/device_buffer.hpp"
#include "gemm_inputs.hpp"
#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_tiles.hpp"
#include "vendor_gemms.hpp"

namespace kbench {
namespace {

struct Mnk {
  std::int64_t m, n, k;
};

// gtest prints a failing test's parameter: the shape, not its bytes.
void PrintTo(const Mnk& s, std::ostream* os) { *os << s.m << "x" << s.n << "x" << s.k; }

// Ragged (unaligned rows: the SIMT fallback; aligned rows in ragged tiles: the mma path's
// zero-filled edges), tiny, square, and K = 1024.
// Decode-like ones: one row and a few against aligned and ragged N, long and short K (wgmma_swap
// cuts K of 1 x 4104 x 4099, 3 x 1032 x 2048, 17 x 1000 x 1024 and 300 x 520 x 1024 into several
// ranges; test_gemm_swap_splits.cu checks it at more decode shapes, alone). 1300 x 4000 is more
// tiles than an H100's or H200's 132 multiprocessors hold at once (176 of 128 x 256, 231 of 128 x
// 192) and not whole waves: the stream-K configurations cut them, through auto's workspace too.
const Mnk kShapes[] = {{127, 255, 65}, {1, 1, 1},     {33, 17, 9},      {127, 248, 72},  {129, 136, 200},
                       {256, 256, 256}, {64, 64, 64}, {300, 520, 1024}, {17, 1000, 1024}, {1, 4104, 4099},
                       {3, 1032, 2048}, {8, 264, 64},  {5, 1001, 300},   {2, 8, 8},        {1300, 4000, 72}};

// Every variant that takes the case passes its check (cuBLAS's left out under racecheck); returns
// how many ran.
int check_all(const Case& c, const InputTweak& tweak = {}) {
  const Op& op = registry().op("gemm");
  Rng rng(7);
  const PreparedCase pc = prepare_case(op, c, rng, tweak);
  int ran = 0;
  for (const Variant* v : registry().variants("gemm")) {
    if (!v->unsupported(c).empty() || test::left_out_here(*v)) continue;
    const CheckInfo info = check_variant(pc, *v, nullptr);
    EXPECT_TRUE(info.passed) << case_label(c) << " variant " << v->name << ": " << info.detail;
    ++ran;
  }
  return ran;
}

// The wgmma variants of a dtype where the device runs them (sm_90), else none: 16-bit, one per
// configuration and wgmma_swap.
int hopper_variants(DType t) {
  if (!gemm::hopper_problem().empty()) return 0;
  return static_cast<int>(t == DType::f32 ? gemm::kWgmmaTf32Configs.size() : gemm::kWgmmaConfigs.size() + 1);
}

// What check_all runs for a dtype: the variants' support depends on the dtype (and device) alone.
// 16-bit: simt, every tile configuration, each wgmma configuration and wgmma_swap on sm_90, auto,
// cublas, cublas_best; float32: simt, tf32, one tf32_<tile> per tf32 configuration, each wgmma_tf32
// configuration on sm_90 and the four cuBLAS variants (cublas, cublas_best and their _tf32 twins).
int variants_for(DType t) {
  const int cublas = test::cublas_checked(t == DType::f32 ? 4 : 2);
  return t == DType::f32 ? 2 + static_cast<int>(gemm::kTf32Configs.size()) + hopper_variants(t) + cublas
                         : static_cast<int>(gemm::kTileConfigs.size()) + hopper_variants(t) + 2 + cublas;
}

// One test per dtype and shape: under racecheck one test per dtype ran past 540 s (session 21's
// call 3: `auto` tunes its candidates for each shape's bucket, and every launch is instrumented), while
// the sanitizer runs each test in its own process with its own limit, a few side by side.
class GemmEveryVariant : public ::testing::TestWithParam<std::tuple<DType, Mnk>> {};

TEST_P(GemmEveryVariant, OnRaggedAndSquareShapes) {
  KB_REQUIRE_GPU();
  const auto [t, s] = GetParam();
  EXPECT_EQ(check_all(make_case(registry().op("gemm"), t, {s.m, s.n, s.k})), variants_for(t)) << dtype_name(t);
}

std::string dtype_and_shape(const ::testing::TestParamInfo<std::tuple<DType, Mnk>>& info) {
  const Mnk& s = std::get<1>(info.param);
  return std::string(dtype_name(std::get<0>(info.param))) + "_" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k);
}

INSTANTIATE_TEST_SUITE_P(GemmGpu, GemmEveryVariant, ::testing::Combine(::testing::ValuesIn(kAllDTypes), ::testing::ValuesIn(kShapes)),
                         dtype_and_shape);

TEST(GemmGpu, KZeroGivesZeros) {
  KB_REQUIRE_GPU();
  for (const DType t : kAllDTypes) EXPECT_EQ(check_all(Case{"gemm", t, {37, 70, 0}}), variants_for(t)) << dtype_name(t);
}

TEST(GemmGpu, ExactFloat16SumNeedsAFloat32Accumulator) {
  KB_REQUIRE_GPU();
  const Case c{"gemm", DType::f16, {64, 64, 48}};
  EXPECT_EQ(check_all(c, test::fill_2050), variants_for(DType::f16));
  const Case unaligned{"gemm", DType::f16, {5, 7, 33}};  // the SIMT path
  EXPECT_EQ(check_all(unaligned, test::fill_2050), variants_for(DType::f16));
}

// 8192 x 512 x 1024 (2^32 multiply-adds): the oracle computes a sample of 256 rows only, and
// every variant is held to them.
TEST(GemmGpu, LargeCaseChecksSampledRows) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("gemm");
  const Case c = make_case(op, DType::bf16, {8192, 512, 1024});
  Rng rng(9);
  const PreparedCase pc = prepare_case(op, c, rng);
  EXPECT_TRUE(sampled_output(pc, pc.output_desc.at(0)));
  EXPECT_EQ(pc.check_rows.size(), 256u);
  EXPECT_EQ(pc.expected[0].values.size(), 256u * 512);
  EXPECT_EQ(pc.check_rows.front(), 0);
  EXPECT_EQ(pc.check_rows.back(), 8191);
  for (const char* name : {"mma_128x256", "auto", "cublas"}) {
    const Variant& v = registry().variant("gemm", name);
    if (test::left_out_here(v)) continue;
    const CheckInfo info = check_variant(pc, v, nullptr);
    EXPECT_TRUE(info.passed) << name << ": " << info.detail;
  }
}

// A and B read through row strides wider than their rows: 16-byte aligned (the mma path), not
// (the SIMT path), and aligned rows whose last 16-byte chunk is partial (K = 36 in rows of 40:
// cp.async copies 8 of the chunk's 16 bytes and zero-fills the rest).
TEST(GemmGpu, StridedOperands) {
  KB_REQUIRE_GPU();
  struct Layout {
    std::int64_t k, pad_a, pad_b;
    const char* path;
  };
  const std::int64_t m = 70, n = 72;
  // The third: rows of 72 bytes on 80-byte strides end inside a 16-byte chunk, which the cp.async
  // copy would read past the row (and, at the last row of a buffer cut there, past the buffer).
  for (const Layout& l : {Layout{40, 8, 8, "mma"}, Layout{40, 3, 3, "simt"}, Layout{36, 4, 8, "simt"}}) {
    const std::int64_t k = l.k, pad = l.pad_a, lda = k + l.pad_a, ldb = n + l.pad_b;
    std::vector<std::uint16_t> ha(static_cast<std::size_t>(m * lda), 0x7e00), hb(static_cast<std::size_t>(k * ldb), 0x7e00);
    std::vector<double> ref(static_cast<std::size_t>(m * n), 0);
    std::vector<double> av(static_cast<std::size_t>(m * k)), bv(static_cast<std::size_t>(k * n));
    for (std::int64_t i = 0; i < m * k; ++i) av[i] = static_cast<double>((i * 7) % 9) - 4;
    for (std::int64_t i = 0; i < k * n; ++i) bv[i] = static_cast<double>((i * 5) % 7) - 3;
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t j = 0; j < k; ++j) ha[r * lda + j] = float_to_half_bits(static_cast<float>(av[r * k + j]));
    for (std::int64_t r = 0; r < k; ++r)
      for (std::int64_t j = 0; j < n; ++j) hb[r * ldb + j] = float_to_half_bits(static_cast<float>(bv[r * n + j]));
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t col = 0; col < n; ++col)
        for (std::int64_t j = 0; j < k; ++j) ref[r * n + col] += av[r * k + j] * bv[j * n + col];
    DeviceBuffer da(ha.size() * 2), db(hb.size() * 2), dc(static_cast<std::size_t>(m * n) * 2);
    ASSERT_EQ(cudaMemcpy(da.get(), ha.data(), ha.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(db.get(), hb.data(), hb.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    const DeviceTensor a{da.get(), DType::f16, m, k, lda}, b{db.get(), DType::f16, k, n, ldb}, c{dc.get(), DType::f16, m, n, n};
    EXPECT_EQ(gemm::mma_path(a, b), l.path);
    for (std::size_t i = 0; i < gemm::kTileConfigs.size(); ++i) {
      ASSERT_EQ(cudaMemset(dc.get(), 0xFF, dc.size()), cudaSuccess);
      gemm::launch_mma(i, a, b, c, nullptr);
      std::vector<std::uint16_t> got(static_cast<std::size_t>(m * n));
      ASSERT_EQ(cudaMemcpy(got.data(), dc.get(), got.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      for (std::int64_t e = 0; e < m * n; ++e)  // small integers: exact in float16 and float32
        ASSERT_EQ(static_cast<double>(half_bits_to_float(got[e])), ref[e])
            << gemm::kTileConfigs[i].name() << " pad " << pad << " at " << e;
    }
  }
}

// The autotuner's choice is recorded, and cases of one bucket share it.
TEST(GemmGpu, AutoRecordsItsChoicePerBucket) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("gemm");
  const Variant& v = registry().variant("gemm", "auto");
  const auto plan_of = [&](std::int64_t m) {
    const Case c = make_case(op, DType::f16, {m, 1024, 512});
    Rng rng(3);
    const PreparedCase pc = prepare_case(op, c, rng);
    EXPECT_TRUE(check_variant(pc, v, nullptr).passed);
    return nlohmann::json::parse(v.plan(c));
  };
  const auto p33 = plan_of(33), p40 = plan_of(40), p100 = plan_of(100);
  EXPECT_EQ(p33.at("bucket"), nlohmann::json({6, 10, 9}));
  EXPECT_EQ(p33, p40);  // one tuning: the same choice, tuned on M = 33
  EXPECT_EQ(p40.at("tuned_on")[0], 33);
  EXPECT_EQ(p100.at("bucket")[0], 7);
  EXPECT_EQ(p100.at("tuned_on")[0], 100);
  EXPECT_EQ(registry().variant("gemm", "mma_128x256").plan(make_case(op, DType::f16, {127, 255, 65})).find("simt") != std::string::npos, true);
}

TEST(GemmGpu, ContractsOnDeviceBuffers) {
  KB_REQUIRE_GPU();
  DeviceBuffer buf(std::size_t{1} << 20);
  // Zeros: the one launch the contracts allow reads A and B (initcheck flagged them unwritten).
  ASSERT_EQ(cudaMemset(buf.get(), 0, std::size_t{1} << 20), cudaSuccess);
  auto* base = static_cast<unsigned char*>(buf.get());
  const DeviceTensor a{base, DType::f16, 64, 64, 64}, b{base + 16384, DType::f16, 64, 64, 64};
  const DeviceTensor c{base + 32768, DType::f16, 64, 64, 64};
  EXPECT_NO_THROW(gemm::launch_mma(0, a, b, c, nullptr));
  const DeviceTensor in_place{base + 4096, DType::f16, 64, 64, 64};  // A's second half (A spans 8 KiB)
  for (std::size_t i = 0; i < gemm::kTileConfigs.size(); ++i) EXPECT_THROW(gemm::launch_mma(i, a, b, in_place, nullptr), std::invalid_argument);
  EXPECT_THROW(gemm::launch_simt(a, b, in_place, nullptr), std::invalid_argument);
  if (gemm::hopper_problem().empty()) {  // a workspace that holds its partials: the overlap refuses
    EXPECT_THROW(gemm::launch_wgmma_swap(a, b, in_place, nullptr, base + 65536, 64 * 64 * sizeof(float)), std::invalid_argument);
  }
  const Variant& cublas = registry().variant("gemm", "cublas");
  EXPECT_THROW(cublas.launch(LaunchArgs{Case{"gemm", DType::f16, {64, 64, 64}}, std::vector<DeviceTensor>{a, b},
                                        std::vector<DeviceTensor>{in_place}, nullptr, nullptr}),
               std::invalid_argument);
  const DeviceTensor short_b{base + 16384, DType::f16, 63, 64, 64};
  EXPECT_THROW(gemm::launch_mma(0, a, short_b, c, nullptr), std::invalid_argument);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace kbench
