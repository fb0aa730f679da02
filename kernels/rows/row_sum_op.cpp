// row_sum: y[r] = sum_c x[r, c]. Reads rows x cols, writes rows elements. The input is a
// [rows, cols] view with the case's row stride; the output is contiguous.
#include <cmath>

#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_op.hpp"

namespace kbench::rows {

Op make_row_sum_op() {
  Op op = make_row_op("row_sum", "y[r] = sum of row r, float32 accumulation");
  op.inputs = [](const Case& c) { return std::vector<TensorDesc>{row_input(c, "x")}; };
  op.outputs = [](const Case& c) { return std::vector<TensorDesc>{row_output(c, "sum", 1)}; };
  op.generate = [](const Case&, std::vector<HostTensor>& in, Rng& rng) {
    for (auto& v : in[0].values) v = rng.uniform(-1.0, 1.0);
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
  op.tolerance = [](const Case& c, std::size_t) {
    const double atol = 16 * u32() * std::sqrt(static_cast<double>(std::max<std::int64_t>(cols_of(c), 1))) +
                        (c.dtype == DType::f16 ? std::ldexp(1.0, -25) : 0.0);
    return Tolerance{atol, dtype_epsilon(c.dtype),
                     "tree sum in float32: 16 u32 sqrt(width) for |x| <= 1, one output rounding"};
  };
  op.bytes = [](const Case& c) { return static_cast<double>(rows_of(c)) * (cols_of(c) + 1) * dtype_size(c.dtype); };
  return op;
}

}  // namespace kbench::rows
