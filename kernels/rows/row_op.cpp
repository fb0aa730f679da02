#include "kernels/rows/row_op.hpp"

#include <limits>

#include "core/parallel.hpp"
#include "kernels/rows/row_contract.hpp"

namespace kbench::rows {

Op make_row_op(const char* name, const char* summary) {
  Op op;
  op.name = name;
  op.summary = summary;
  op.shape_rank = 2;
  op.sources = {"kernels/rows/", "kernels/common/"};
  op.flops = [](const Case&) { return 0.0; };
  op.oracle_by_row = true;  // every row op's per-row outputs are computed row by row
  return op;
}

TensorDesc row_input(const Case& c, const char* name) {
  return TensorDesc{name, c.dtype, rows_of(c), cols_of(c), c.row_stride ? c.row_stride : cols_of(c)};
}

TensorDesc row_output(const Case& c, const char* name, std::int64_t cols) {
  return TensorDesc{name, c.dtype, rows_of(c), cols, cols};
}

Eigen::Map<const RowMajor> as_matrix(const HostTensor& t) {
  return {t.values.data(), static_cast<Eigen::Index>(t.desc.rows), static_cast<Eigen::Index>(t.desc.cols)};
}

Eigen::Map<RowMajor> as_matrix(HostTensor& t) {
  return {t.values.data(), static_cast<Eigen::Index>(t.desc.rows), static_cast<Eigen::Index>(t.desc.cols)};
}

void for_each_row(Eigen::Index rows, Eigen::Index cols, const std::function<void(Eigen::Index)>& fn) {
  const std::int64_t grain = std::max<std::int64_t>(1, kParallelGrain / std::max<Eigen::Index>(cols, 1));
  parallel_pieces(rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (auto r = static_cast<Eigen::Index>(begin); r < end; ++r) fn(r);
  });
}

// exp is std::exp element by element, never Eigen's `.array().exp()`: Eigen 3.4's vectorized
// exp clamps its argument to [-709.78, 709.78], so exp(-inf) = 2e-308 instead of 0 in the
// vectorized body (a fully masked row became uniform, 1/width) while the scalar peel at an
// unaligned row start gives 0: the oracle disagreed with itself, column by column.
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

}  // namespace kbench::rows
