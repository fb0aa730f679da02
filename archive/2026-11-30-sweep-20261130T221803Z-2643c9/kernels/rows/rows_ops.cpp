// The row ops: what is computed, their inputs, FP64 oracles (Eigen) and tolerances.
//   row_sum           y[r] = sum_c x[r, c]                       read R*C, write R
//   softmax           y = exp(x - max) / sum exp(x - max)        read R*C, write R*C
//   softmax_backward  dx = y * (dy - dot(y, dy))                 read 2*R*C, write R*C
// Inputs are [rows, cols] views with the case's row stride; outputs are contiguous.
#include <Eigen/Core>

#include <cmath>
#include <limits>

#include "core/parallel.hpp"
#include "kernels/rows/rows.hpp"

namespace kbench::rows {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::int64_t rows_of(const Case& c) { return c.shape.at(0); }
std::int64_t cols_of(const Case& c) { return c.shape.at(1); }

TensorDesc input(const Case& c, const char* name) {
  return TensorDesc{name, c.dtype, rows_of(c), cols_of(c), c.row_stride ? c.row_stride : cols_of(c)};
}
TensorDesc output(const Case& c, const char* name, std::int64_t cols) {
  return TensorDesc{name, c.dtype, rows_of(c), cols, cols};
}

Eigen::Map<const RowMajor> as_matrix(const HostTensor& t) {
  return {t.values.data(), static_cast<Eigen::Index>(t.desc.rows), static_cast<Eigen::Index>(t.desc.cols)};
}

double u32() { return std::ldexp(1.0, -24); }

// fn(r) for every row r, rows split across the CPU's cores (each row is one thread's).
template <class F>
void for_each_row(Eigen::Index rows, Eigen::Index cols, F&& fn) {
  const std::int64_t grain = std::max<std::int64_t>(1, kParallelGrain / std::max<Eigen::Index>(cols, 1));
  parallel_pieces(rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (auto r = static_cast<Eigen::Index>(begin); r < end; ++r) fn(r);
  });
}

// Softmax in double with the kernels' semantics: -inf entries give 0, a row of only -inf gives
// NaN (0/0), NaN or +inf anywhere gives a row of NaN.
// exp is std::exp element by element, never Eigen's `.array().exp()`: Eigen 3.4's vectorized
// exp clamps its argument to [-709.78, 709.78], so exp(-inf) = 2e-308 instead of 0 in the
// vectorized body (a fully masked row became uniform, 1/width) while the scalar peel at an
// unaligned row start gives 0: the oracle disagreed with itself, column by column.
// y must already have x's shape.
void softmax_rows(const Eigen::Ref<const RowMajor>& x, Eigen::Ref<RowMajor> y) {
  for_each_row(x.rows(), x.cols(), [&](Eigen::Index r) {
    double m = -std::numeric_limits<double>::infinity();
    for (Eigen::Index c = 0; c < x.cols(); ++c) m = x(r, c) > m ? x(r, c) : m;
    const double shift = std::isinf(m) && m < 0 ? 0.0 : m;
    double sum = 0.0;
    for (Eigen::Index c = 0; c < x.cols(); ++c) {
      y(r, c) = std::exp(x(r, c) - shift);  // exp(-inf) = 0, exp(NaN) = NaN
      sum += y(r, c);
    }
    for (Eigen::Index c = 0; c < x.cols(); ++c) y(r, c) /= sum;  // all -inf: 0/0 = NaN
  });
}

}  // namespace

Op make_row_sum_op() {
  Op op;
  op.name = "row_sum";
  op.summary = "y[r] = sum of row r, float32 accumulation";
  op.shape_rank = 2;
  op.sources = {"kernels/rows/", "kernels/common/"};
  op.inputs = [](const Case& c) { return std::vector<TensorDesc>{input(c, "x")}; };
  op.outputs = [](const Case& c) { return std::vector<TensorDesc>{output(c, "sum", 1)}; };
  op.generate = [](const Case&, std::vector<HostTensor>& in, Rng& rng) {
    for (auto& v : in[0].values) v = rng.uniform(-1.0, 1.0);
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    HostTensor y{output(c, "sum", 1), std::vector<double>(static_cast<std::size_t>(rows_of(c)))};
    const auto x = as_matrix(in[0]);
    for_each_row(x.rows(), x.cols(), [&](Eigen::Index r) { y.values[static_cast<std::size_t>(r)] = x.row(r).sum(); });
    return std::vector<HostTensor>{std::move(y)};
  };
  // float32 accumulation of |x| <= 1 in a tree (a thread adds at most 32 elements, chunk
  // partials are compensated, then log2(threads) shuffle levels): rounding errors of random
  // sign add up like sqrt(width), so 16 u32 sqrt(width) has ~10x room over what that order
  // gives, yet a serial float32 sum (error ~ width u32 at 2^20) or a dropped element fails.
  // The output is rounded once to the dtype: rtol u. Inputs of larger magnitude scale atol.
  op.tolerance = [](const Case& c, std::size_t) {
    const double atol = 16 * u32() * std::sqrt(static_cast<double>(std::max<std::int64_t>(cols_of(c), 1))) +
                        (c.dtype == DType::f16 ? std::ldexp(1.0, -25) : 0.0);
    return Tolerance{atol, dtype_epsilon(c.dtype),
                     "tree sum in float32: 16 u32 sqrt(width) for |x| <= 1, one output rounding"};
  };
  op.bytes = [](const Case& c) {
    return static_cast<double>(rows_of(c)) * (cols_of(c) + 1) * dtype_size(c.dtype);
  };
  op.flops = [](const Case&) { return 0.0; };
  return op;
}

Op make_softmax_op() {
  Op op;
  op.name = "softmax";
  op.summary = "softmax over each row, float32 inside";
  op.shape_rank = 2;
  op.sources = {"kernels/rows/", "kernels/common/"};
  op.inputs = [](const Case& c) { return std::vector<TensorDesc>{input(c, "x")}; };
  op.outputs = [](const Case& c) { return std::vector<TensorDesc>{output(c, "y", cols_of(c))}; };
  op.generate = [](const Case&, std::vector<HostTensor>& in, Rng& rng) {
    for (auto& v : in[0].values) v = rng.uniform(-4.0, 4.0);
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    HostTensor out{output(c, "y", cols_of(c)), std::vector<double>(in[0].values.size())};
    softmax_rows(as_matrix(in[0]), Eigen::Map<RowMajor>(out.values.data(), rows_of(c), cols_of(c)));
    return std::vector<HostTensor>{std::move(out)};
  };
  // Relative error of one output in float32: x - max (exact near the max), its scaling by
  // log2(e) and exp2 (|d| u32 for |d| <= 16 where the output is above 1e-7, plus exp2's 2 ulp),
  // the row sum (at most 32 serial adds per thread, compensated chunks, 10 tree levels) and
  // the reciprocal and product: under 100 u32, so 128 u32; then one rounding to the output
  // dtype (u). The absolute term covers outputs below ~1e-7 (|d| > 16), where the exponent
  // error grows with |d|, and float16's subnormals (spacing 2^-24).
  op.tolerance = [](const Case& c, std::size_t) {
    const double atol = c.dtype == DType::f16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -40);
    const double rtol = 128 * u32() + (c.dtype == DType::f32 ? 0.0 : dtype_epsilon(c.dtype));
    return Tolerance{atol, rtol, "float32 exp and row sum: 128 u32, one output rounding"};
  };
  op.bytes = [](const Case& c) { return 2.0 * rows_of(c) * cols_of(c) * dtype_size(c.dtype); };
  op.flops = [](const Case&) { return 0.0; };
  return op;
}

Op make_softmax_backward_op() {
  Op op;
  op.name = "softmax_backward";
  op.summary = "dx = y * (dy - dot(y, dy)) per row, float32 inside";
  op.shape_rank = 2;
  op.sources = {"kernels/rows/", "kernels/common/"};
  op.inputs = [](const Case& c) {
    return std::vector<TensorDesc>{input(c, "y"), input(c, "dy")};
  };
  op.outputs = [](const Case& c) { return std::vector<TensorDesc>{output(c, "dx", cols_of(c))}; };
  // y: a real softmax of logits in [-2, 2] (so y <= e^4 / width); dy: mean 0.5, so that a lost
  // part of dot(y, dy) moves every dx visibly (a zero-mean dy would hide it).
  op.generate = [](const Case&, std::vector<HostTensor>& in, Rng& rng) {
    RowMajor logits(in[0].desc.rows, in[0].desc.cols);
    for (Eigen::Index i = 0; i < logits.size(); ++i) logits.data()[i] = rng.uniform(-2.0, 2.0);
    softmax_rows(logits, Eigen::Map<RowMajor>(in[0].values.data(), logits.rows(), logits.cols()));
    for (auto& v : in[1].values) v = 0.5 + rng.uniform(-1.0, 1.0);
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    const auto y = as_matrix(in[0]);
    const auto dy = as_matrix(in[1]);
    HostTensor out{output(c, "dx", cols_of(c)), std::vector<double>(in[0].values.size())};
    Eigen::Map<RowMajor> dx(out.values.data(), y.rows(), y.cols());
    for_each_row(y.rows(), y.cols(), [&](Eigen::Index r) {
      const double dot = y.row(r).cwiseProduct(dy.row(r)).sum();
      dx.row(r) = y.row(r).cwiseProduct((dy.row(r).array() - dot).matrix());
    });
    return std::vector<HostTensor>{std::move(out)};
  };
  // dot(y, dy) in float32 has an error of at most ~50 u32 * sum |y dy| <= 75 u32 (sum y = 1,
  // |dy| <= 1.5); it reaches dx multiplied by y <= min(1, e^4 / width): the absolute term.
  // dy - dot and the product add 2 u32 relative, the output rounding u; float16 outputs below
  // 2^-14 are subnormal (spacing 2^-24).
  op.tolerance = [](const Case& c, std::size_t) {
    const double ymax = std::min(1.0, std::exp(4.0) / std::max<std::int64_t>(cols_of(c), 1));
    const double atol = 128 * u32() * 1.5 * ymax + (c.dtype == DType::f16 ? std::ldexp(1.0, -24) : 0.0);
    const double rtol = 4 * u32() + (c.dtype == DType::f32 ? 0.0 : dtype_epsilon(c.dtype));
    return Tolerance{atol, rtol, "float32 dot scaled by the largest y, one output rounding"};
  };
  op.bytes = [](const Case& c) { return 3.0 * rows_of(c) * cols_of(c) * dtype_size(c.dtype); };
  op.flops = [](const Case&) { return 0.0; };
  return op;
}

}  // namespace kbench::rows
