// gemm: C = A.B. Reads A [M, K] and B [K, N] once and writes C [M, N] once:
// (MK + KN + MN) elements; 2MNK flops.
#include "kernels/gemm/gemm_op.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>

#include "core/parallel.hpp"
#include "kernels/common/input_kinds.hpp"

namespace kbench::gemm {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double u32() { return std::ldexp(1.0, -24); }

TensorDesc a_desc(const Case& c) { return TensorDesc{"a", c.dtype, m_of(c), k_of(c), k_of(c)}; }
TensorDesc b_desc(const Case& c) { return TensorDesc{"b", c.dtype, k_of(c), n_of(c), n_of(c)}; }
TensorDesc c_desc(const Case& c, std::int64_t rows) { return TensorDesc{"c", c.dtype, rows, n_of(c), n_of(c)}; }

}  // namespace

void fill_gemm_inputs(const Case& c, std::vector<HostTensor>& in, Rng& rng, int bits) {
  for (auto& t : in) {
    if (c.dtype == DType::f32 || bits < 0) {
      fill_uniform(t, rng, -1.0, 1.0);
      continue;
    }
    // 2^(bits+1) + 1 values, each equally likely.
    const std::uint64_t levels = std::uint64_t{1} << bits;
    for (double& v : t.values)
      v = (static_cast<double>(rng.below(2 * levels + 1)) - static_cast<double>(levels)) / static_cast<double>(levels);
  }
}

int grid_bits(std::int64_t k) {
  // Products of two multiples of 2^-s in [-1, 1] are multiples of 2^-2s of magnitude <= 1, and
  // any partial sum of K of them a multiple of 2^-2s below K + 1 in magnitude: float32 holds
  // it exactly when (K + 1) 2^2s <= 2^24 (its 24-bit significand), in any summation order.
  // s = 5 (65 levels) is the finest grid; K of 2^14 - 1 still gets it.
  for (int s = 5; s >= 0; --s)
    if (static_cast<double>(k + 1) * std::ldexp(1.0, 2 * s) <= std::ldexp(1.0, 24)) return s;
  return -1;
}

// float32 inputs are uniform in [-1, 1] (continuous), so that a float32 accumulator is
// distinguished from a tf32 one. The summation of K products in float32 (fma, any order or
// blocking) rounds each partial sum s_j once, by at most u |s_j| (u = 2^-24). The worst-case
// bound, gamma_K sum|a||b| <= u K^2 (|a|, |b| <= 1), is 1.0 at K = 4096: far above a dropped
// product (|ab| ~ 1/4), so it could not catch one. The rounding errors of uniform-signed
// inputs are independent with mean 0, so their sum has a standard deviation of at most
// u sqrt(sum_j E[s_j^2]) = u sqrt(sum_j j/9) < u K / sqrt(18) = 0.24 u K (each product has
// variance 1/9). atol = 4 u K is 17 of those deviations: no element of a case (2^26 at most
// checked) comes near it by chance, while one missing product at K = 8192 (error ~ 1/4 against
// an allowance of 0.002) is still caught. The float32 output is the accumulator: no rounding.
//
// float16 and bfloat16 inputs lie on the grid of grid_bits(K): every product and partial sum
// is exact in float32 (above), so a float32 accumulator gives the exact product and the only
// error left is its one rounding to the output type, half an ulp: rtol = u of the dtype. Any
// lost product, 16-bit partial sum or misplaced tile then shows. Results are multiples of
// 2^-10 or coarser, never float16 subnormals, so no absolute term is needed. Beyond K = 2^24
// no grid is exact and the float32 rule above applies, plus the output rounding.
Tolerance gemm_tolerance(DType t, std::int64_t k) {
  const double kd = static_cast<double>(std::max<std::int64_t>(k, 1));
  if (t == DType::f32) return Tolerance{4 * u32() * kd, u32(), "float32 sum of K products: 4 u K (17 sigma), argued in gemm_op.cpp"};
  if (grid_bits(k) >= 0) return Tolerance{0, dtype_epsilon(t), "exact float32 sum on the input grid, one rounding to the dtype"};
  return Tolerance{4 * u32() * kd, dtype_epsilon(t), "float32 sum of K products (4 u K) and one rounding to the dtype"};
}

// tf32 keeps 10 of float32's 23 mantissa bits: each input is off by under 2^-10 relative
// (truncated; 2^-11 rounded), each product by under 2^-9 |ab|, with a sign that follows the
// uniform-signed product: independent, mean 0, standard deviation of the sum at most
// 2^-9 sqrt(sum E[(ab)^2]) = 2^-9 sqrt(K) / 3. atol = 6 2^-9 sqrt(K) is 18 of those, plus the
// float32 accumulation's 4 u K.
Tolerance tf32_tolerance(std::int64_t k) {
  const double kd = static_cast<double>(std::max<std::int64_t>(k, 1));
  return Tolerance{6 * std::ldexp(1.0, -9) * std::sqrt(kd) + 4 * u32() * kd, u32(),
                   "tf32 products (6 2^-9 sqrt(K), 18 sigma) and float32 accumulation (4 u K)"};
}

std::int64_t gemm_check_rows(const Case& c) {
  const double macs = static_cast<double>(m_of(c)) * static_cast<double>(n_of(c)) * static_cast<double>(k_of(c));
  return macs <= kFullCheckMacs ? 0 : kSampledRows;
}

std::vector<double> reference_rows(const HostTensor& a, const HostTensor& b, const std::vector<std::int64_t>& rows) {
  const Eigen::Index k = static_cast<Eigen::Index>(a.desc.cols), n = static_cast<Eigen::Index>(b.desc.cols);
  std::vector<double> out(rows.size() * static_cast<std::size_t>(n));
  const Eigen::Map<const RowMajor> bm(b.values.data(), k, n);
  // Blocks of 16 rows per piece: Eigen's blocked product on each, the pieces across the cores.
  constexpr std::int64_t kBlock = 16;
  const std::int64_t blocks = (static_cast<std::int64_t>(rows.size()) + kBlock - 1) / kBlock;
  parallel_pieces(blocks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t blk = begin; blk < end; ++blk) {
      const std::int64_t first = blk * kBlock;
      const std::int64_t count = std::min<std::int64_t>(kBlock, static_cast<std::int64_t>(rows.size()) - first);
      RowMajor am(count, k);
      for (std::int64_t i = 0; i < count; ++i)
        for (Eigen::Index j = 0; j < k; ++j)
          am(i, j) = a.values[static_cast<std::size_t>(rows[first + i] * k + j)];
      Eigen::Map<RowMajor> cm(out.data() + first * n, count, n);
      if (k == 0) cm.setZero();
      else cm.noalias() = am * bm;
    }
  });
  return out;
}

Op make_gemm_op() {
  Op op;
  op.name = "gemm";
  op.summary = "C = A.B, row-major A [M, K] and B [K, N]; 16-bit inputs accumulate in float32";
  op.shape_rank = 3;
  op.sources = {"kernels/gemm/", "kernels/common/"};
  op.inputs = [](const Case& c) { return std::vector<TensorDesc>{a_desc(c), b_desc(c)}; };
  op.outputs = [](const Case& c) { return std::vector<TensorDesc>{c_desc(c, m_of(c))}; };
  // Only random inputs: the tolerance rests on their distribution (above); an adversarial
  // kind would need its own argument.
  op.generate = [](const Case& c, std::vector<HostTensor>& in, Rng& rng) {
    fill_gemm_inputs(c, in, rng, grid_bits(k_of(c)));
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    std::vector<std::int64_t> all(static_cast<std::size_t>(m_of(c)));
    for (std::int64_t r = 0; r < m_of(c); ++r) all[static_cast<std::size_t>(r)] = r;
    return std::vector<HostTensor>{HostTensor{c_desc(c, m_of(c)), reference_rows(in[0], in[1], all)}};
  };
  op.check_sample_rows = gemm_check_rows;
  op.oracle_rows = [](const Case& c, const std::vector<HostTensor>& in, const std::vector<std::int64_t>& rows) {
    return std::vector<HostTensor>{
        HostTensor{c_desc(c, static_cast<std::int64_t>(rows.size())), reference_rows(in[0], in[1], rows)}};
  };
  op.tolerance = [](const Case& c, std::size_t) { return gemm_tolerance(c.dtype, k_of(c)); };
  op.bytes = [](const Case& c) {
    const double m = static_cast<double>(m_of(c)), n = static_cast<double>(n_of(c)), k = static_cast<double>(k_of(c));
    return (m * k + k * n + m * n) * static_cast<double>(dtype_size(c.dtype));
  };
  op.flops = [](const Case& c) {
    return 2.0 * static_cast<double>(m_of(c)) * static_cast<double>(n_of(c)) * static_cast<double>(k_of(c));
  };
  return op;
}

}  // namespace kbench::gemm
