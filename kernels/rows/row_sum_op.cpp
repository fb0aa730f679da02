// row_sum: y[r] = sum_c x[r, c]. Reads rows x cols, writes rows elements. The input is a
// [rows, cols] view with the case's row stride; the output is contiguous.
#include <algorithm>
#include <cmath>

#include "kernels/common/input_kinds.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_op.hpp"

namespace kbench::rows {

namespace {

// The largest |x| of the case's inputs. Random, cancelling and constant rows stay within 1, as
// the tolerance is written for. Large rows reach dtype_max / (16 sqrt(width)): their sum, of
// random sign, has a standard deviation of that times sqrt(width / 3), so it stays finite in
// the dtype (and in float32, where the kernels add) by over 27 standard deviations.
double input_scale(const Case& c) {
  if (c.input_kind != InputKind::large) return 1.0;
  return dtype_max(c.dtype) / (16 * std::sqrt(static_cast<double>(std::max<std::int64_t>(cols_of(c), 1))));
}

}  // namespace

Op make_row_sum_op() {
  Op op = make_row_op("row_sum", "y[r] = sum of row r, float32 accumulation");
  op.inputs = [](const Case& c) { return std::vector<TensorDesc>{row_input(c, "x")}; };
  op.outputs = [](const Case& c) { return std::vector<TensorDesc>{row_output(c, "sum", 1)}; };
  // Probe inputs beyond random: large (above), cancelling (pairs x, -x + 1e-3 noise: the row
  // sums to about 0, where the output's rounding allows nothing and the absolute term alone
  // must cover the float32 accumulation) and constant rows (rounding errors of one sign; the
  // value is shrunk for wide rows so that the sum stays below 2^15, inside float16's range).
  op.input_kinds = {InputKind::random, InputKind::large, InputKind::cancelling, InputKind::constant};
  op.generate = [](const Case& c, std::vector<HostTensor>& in, Rng& rng) {
    const double scale = input_scale(c);
    const double constant = std::min(1.0, 32768.0 / static_cast<double>(std::max<std::int64_t>(cols_of(c), 1)));
    switch (c.input_kind) {
      case InputKind::cancelling: fill_cancelling_rows(in[0], rng, 1.0, 1e-3); break;
      case InputKind::constant: fill_constant_rows(in[0], rng, -constant, constant); break;
      default: fill_uniform(in[0], rng, -scale, scale);
    }
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    HostTensor y{row_output(c, "sum", 1), std::vector<double>(static_cast<std::size_t>(rows_of(c)))};
    const auto x = as_matrix(in[0]);
    for_each_row(x.rows(), x.cols(), [&](Eigen::Index r) { y.values[static_cast<std::size_t>(r)] = x.row(r).sum(); });
    return std::vector<HostTensor>{std::move(y)};
  };
  // float32 accumulation of |x| <= 1 in a tree (a thread adds at most 32 elements, chunk
  // partials are compensated, then log2(threads) shuffle levels): rounding errors of random
  // sign add up like sqrt(width), so 16 u32 sqrt(width) has ~10x room over what that order
  // gives, yet a serial float32 sum (error ~ width u32 at 2^20) or a dropped element fails.
  // The output is rounded once to the dtype: rtol u. Inputs of larger magnitude scale atol.
  // Constant rows break the random-sign model: every partial has the sum's sign and the
  // rounding errors share it, so they grow with |sum| (~width |x|), not sqrt(width). A thread's
  // serial chain of 32 adds errs by at most 16 u32 of its partial, and each of at most 16 tree
  // levels by u32 of its result: 32 u32 of |sum| more (the tolerance probe measured up to 6.3
  // u32, cub at 2x32769, against 1 u32 allowed before).
  op.tolerance = [](const Case& c, std::size_t) {
    const double atol =
        16 * u32() * std::sqrt(static_cast<double>(std::max<std::int64_t>(cols_of(c), 1))) * input_scale(c) +
        (c.dtype == DType::f16 ? std::ldexp(1.0, -25) : 0.0);
    const double one_signed = c.input_kind == InputKind::constant ? 32 * u32() : 0.0;
    return Tolerance{atol, dtype_epsilon(c.dtype) + one_signed,
                     "tree sum in float32: 16 u32 sqrt(width) for |x| <= 1 (32 u32 of |sum| more for rows of one "
                     "value), one output rounding"};
  };
  op.bytes = [](const Case& c) { return static_cast<double>(rows_of(c)) * (cols_of(c) + 1) * dtype_size(c.dtype); };
  op.traffic = [](const Case&) { return TrafficMix{1, 0}; };  // the column of sums is one value a row
  return op;
}

}  // namespace kbench::rows
