// gemm_backward: the gradients of C = A.B, given dC,
//   dA [M, K] = dC [M, N] . B^T      (inner dimension N)
//   dB [K, N] = A^T . dC [M, N]      (inner dimension M)
// each only when asked (params da, db); B^T and A^T are the operands as they lie, read through
// their strides. Reads dC and the operands each gradient needs once, writes the gradients once;
// 2MNK flops per gradient.
#include <Eigen/Core>

#include <algorithm>
#include <cmath>

#include "core/parallel.hpp"
#include "kernels/common/input_kinds.hpp"
#include "kernels/gemm/gemm_op.hpp"

namespace kbench::gemm {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

bool wants_da(const Case& c) { return c.param("da") != 0; }
bool wants_db(const Case& c) { return c.param("db") != 0; }

TensorDesc dense(const Case& c, const char* name, std::int64_t rows, std::int64_t cols) {
  return TensorDesc{name, c.dtype, rows, cols, cols};
}

Eigen::Map<const RowMajor> as_matrix(const HostTensor& t) {
  return {t.values.data(), static_cast<Eigen::Index>(t.desc.rows), static_cast<Eigen::Index>(t.desc.cols)};
}

// The inputs in order: dC, then B (for dA), then A (for dB).
struct Inputs {
  const HostTensor* dc = nullptr;
  const HostTensor* a = nullptr;
  const HostTensor* b = nullptr;
};

Inputs inputs_of(const Case& c, const std::vector<HostTensor>& in) {
  Inputs x{&in[0]};
  std::size_t next = 1;
  if (wants_da(c)) x.b = &in[next++];
  if (wants_db(c)) x.a = &in[next++];
  return x;
}

// Blocks of kBlock rows per piece, each an Eigen matrix product (a row at a time would stream
// the whole of B or dC once per row), the pieces across the cores.
constexpr std::int64_t kBlock = 32;

template <class F>
void for_blocks(std::int64_t rows, F&& fn) {
  const std::int64_t blocks = (rows + kBlock - 1) / kBlock;
  parallel_pieces(blocks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t blk = begin; blk < end; ++blk) fn(blk * kBlock, std::min(kBlock, rows - blk * kBlock));
  });
}

// Rows `rows` of dA = dC.B^T (ascending), or all of them when `rows` is empty.
std::vector<double> da_rows(const Inputs& x, const std::vector<std::int64_t>& rows) {
  const auto dc = as_matrix(*x.dc), b = as_matrix(*x.b);
  const Eigen::Index k = b.rows(), n = dc.cols();
  const std::int64_t count = rows.empty() ? dc.rows() : static_cast<std::int64_t>(rows.size());
  std::vector<double> out(static_cast<std::size_t>(count * k));
  for_blocks(count, [&](std::int64_t first, std::int64_t size) {
    RowMajor g(size, n);
    for (std::int64_t i = 0; i < size; ++i)
      g.row(i) = dc.row(rows.empty() ? first + i : rows[static_cast<std::size_t>(first + i)]);
    Eigen::Map<RowMajor>(out.data() + first * k, size, k).noalias() = g * b.transpose();
  });
  return out;
}

// Rows `rows` of dB = A^T.dC (each a sum over M), or all K of them when `rows` is empty.
std::vector<double> db_rows(const Inputs& x, const std::vector<std::int64_t>& rows) {
  const auto a = as_matrix(*x.a), dc = as_matrix(*x.dc);
  const Eigen::Index m = a.rows(), n = dc.cols();
  const std::int64_t count = rows.empty() ? a.cols() : static_cast<std::int64_t>(rows.size());
  std::vector<double> out(static_cast<std::size_t>(count * n));
  for_blocks(count, [&](std::int64_t first, std::int64_t size) {
    RowMajor at(size, m);  // the block's rows of A^T
    for (std::int64_t i = 0; i < size; ++i)
      at.row(i) = a.col(rows.empty() ? first + i : rows[static_cast<std::size_t>(first + i)]).transpose();
    Eigen::Map<RowMajor>(out.data() + first * n, size, n).noalias() = at * dc;
  });
  return out;
}

std::vector<HostTensor> gradients(const Case& c, const std::vector<HostTensor>& in, const std::vector<std::int64_t>& rows) {
  const Inputs x = inputs_of(c, in);
  const std::int64_t m = m_of(c), n = n_of(c), k = k_of(c);
  const auto sampled = static_cast<std::int64_t>(rows.size());
  std::vector<HostTensor> out;
  // Per-row outputs (as many rows as dC, the first input: dA, and dB when K = M) are the
  // sampled rows alone; the harness compares other outputs whole.
  if (wants_da(c)) out.push_back(HostTensor{dense(c, "da", rows.empty() ? m : sampled, k), da_rows(x, rows)});
  if (wants_db(c)) {
    if (!rows.empty() && k == m) out.push_back(HostTensor{dense(c, "db", sampled, n), db_rows(x, rows)});
    else out.push_back(HostTensor{dense(c, "db", k, n), db_rows(x, {})});
  }
  return out;
}

}  // namespace

Op make_gemm_backward_op() {
  Op op;
  op.name = "gemm_backward";
  op.summary = "dA = dC.B^T and dB = A^T.dC, each when asked; transposes read through strides";
  op.shape_rank = 3;
  op.sources = {"kernels/gemm/", "kernels/common/"};
  op.params = {OpParam{"da", 1, 0, 1, "1: compute dA = dC.B^T"}, OpParam{"db", 1, 0, 1, "1: compute dB = A^T.dC"}};
  op.inputs = [](const Case& c) {
    std::vector<TensorDesc> in{dense(c, "dc", m_of(c), n_of(c))};
    if (wants_da(c)) in.push_back(dense(c, "b", k_of(c), n_of(c)));
    if (wants_db(c)) in.push_back(dense(c, "a", m_of(c), k_of(c)));
    return in;
  };
  op.outputs = [](const Case& c) {
    std::vector<TensorDesc> out;
    if (wants_da(c)) out.push_back(dense(c, "da", m_of(c), k_of(c)));
    if (wants_db(c)) out.push_back(dense(c, "db", k_of(c), n_of(c)));
    return out;
  };
  // As gemm's generator, on the grid of the longer of the two inner dimensions (N for dA, M for
  // dB), so that both gradients' float32 sums are exact for 16-bit inputs.
  op.generate = [](const Case& c, std::vector<HostTensor>& in, Rng& rng) {
    fill_gemm_inputs(c, in, rng, grid_bits(std::max(m_of(c), n_of(c))));
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) { return gradients(c, in, {}); };
  // Sampled rows only where every output's oracle can be sampled: dB has K rows, a whole
  // oracle of M N K multiply-adds unless K = M (then its rows are sampled too).
  op.check_sample_rows = [](const Case& c) {
    return wants_db(c) && k_of(c) != m_of(c) ? std::int64_t{0} : gemm_check_rows(c);
  };
  op.oracle_rows = gradients;
  // Each gradient is a gemm with its own inner dimension.
  op.tolerance = [](const Case& c, std::size_t output) {
    const std::int64_t inner = wants_da(c) && output == 0 ? n_of(c) : m_of(c);
    if (c.dtype != DType::f32 && grid_bits(std::max(m_of(c), n_of(c))) < 0)  // no exact grid: drawn as float32's
      return Tolerance{4 * std::ldexp(1.0, -24) * static_cast<double>(inner), dtype_epsilon(c.dtype),
                       "float32 sum of the inner dimension's products (4 u K) and one rounding to the dtype"};
    return gemm_tolerance(c.dtype, inner);
  };
  op.bytes = [](const Case& c) {
    const double m = static_cast<double>(m_of(c)), n = static_cast<double>(n_of(c)), k = static_cast<double>(k_of(c));
    const double per_grad = k * n + m * k;  // the operand read and the gradient written
    return (m * n + (wants_da(c) ? per_grad : 0) + (wants_db(c) ? per_grad : 0)) * static_cast<double>(dtype_size(c.dtype));
  };
  op.flops = [](const Case& c) {
    const double one = 2.0 * static_cast<double>(m_of(c)) * static_cast<double>(n_of(c)) * static_cast<double>(k_of(c));
    return one * ((wants_da(c) ? 1 : 0) + (wants_db(c) ? 1 : 0));
  };
  return op;
}

}  // namespace kbench::gemm
