// The oracle as check_variant compares it (harness/prepare.hpp checked_oracle), without a GPU:
// a case that checks sampled rows gets the oracle's values of those rows, the same values the
// oracle gives them among every row (computed from the sampled rows alone where the op says it
// may, Problem::oracle_by_row), and an output of another shape (rmsnorm_backward's dw, a sum
// over every row) exactly as the oracle over every row gives it.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

std::vector<HostTensor> drawn_inputs(const Op& op, const Case& c) {
  std::vector<HostTensor> in;
  for (const TensorDesc& t : op.inputs(c)) in.push_back({t, std::vector<double>(static_cast<std::size_t>(t.elements()))});
  Rng rng(21);
  op.generate(c, in, rng);
  for (auto& t : in) encode(t.desc.dtype, t.values);
  return in;
}

TEST(CheckedOracle, SampledRowsAreTheFullOraclesRows) {
  int by_row = 0;
  for (const Op& op : registry().ops()) {
    if (op.shape_rank != 2) continue;
    by_row += op.oracle_by_row;
    for (const DType dt : {DType::f32, DType::f16}) {
      const Case c = make_case(op, dt, {300, 257});  // an odd width: rows start unaligned
      const std::vector<HostTensor> in = drawn_inputs(op, c);
      const std::vector<HostTensor> full = op.oracle(c, in);
      const std::vector<std::int64_t> rows = sample_rows(300, 16, 5);
      const std::vector<HostTensor> got = checked_oracle(op, c, in, rows);
      ASSERT_EQ(got.size(), full.size()) << op.name;
      for (std::size_t i = 0; i < full.size(); ++i) {
        const TensorDesc& d = full[i].desc;
        if (!samples_output(rows, 300, d)) {
          EXPECT_EQ(got[i].values, full[i].values) << op.name << " output " << d.name;  // every row, as computed
          continue;
        }
        ASSERT_EQ(got[i].values.size(), rows.size() * static_cast<std::size_t>(d.cols)) << op.name;
        for (std::size_t k = 0; k < rows.size(); ++k)
          for (std::int64_t col = 0; col < d.cols; ++col) {
            const double want = full[i].values[static_cast<std::size_t>(rows[k] * d.cols + col)];
            const double have = got[i].values[k * static_cast<std::size_t>(d.cols) + static_cast<std::size_t>(col)];
            // FP64 sums over a row may pair differently where Eigen's vectorized loop starts
            // at another alignment: a few ulp of double, 10^8 below any tolerance.
            ASSERT_NEAR(have, want, 1e-13 * std::fabs(want) + 1e-300)
                << op.name << " " << dtype_name(dt) << " output " << d.name << " row " << rows[k] << " col " << col;
          }
      }
    }
  }
  EXPECT_GE(by_row, 5);  // row_sum, softmax, softmax_backward, rmsnorm, rmsnorm_backward
}

TEST(CheckedOracle, NoSampleIsTheWholeOracle) {
  const Op& op = registry().op("softmax");
  const Case c = make_case(op, DType::bf16, {40, 100});
  const std::vector<HostTensor> in = drawn_inputs(op, c);
  EXPECT_EQ(checked_oracle(op, c, in, {})[0].values, op.oracle(c, in)[0].values);
  // A sample of every row (or more) is no sample.
  std::vector<std::int64_t> all(40);
  for (std::int64_t r = 0; r < 40; ++r) all[static_cast<std::size_t>(r)] = r;
  EXPECT_EQ(checked_oracle(op, c, in, all)[0].values, op.oracle(c, in)[0].values);
}

TEST(CheckedOracle, WeightGradientSumsEveryRow) {
  const Op& op = registry().op("rmsnorm_backward");
  const Case c = make_case(op, DType::f32, {500, 64}, {{"frozen", 0}});
  const std::vector<HostTensor> in = drawn_inputs(op, c);
  const std::vector<HostTensor> full = op.oracle(c, in);
  const std::vector<HostTensor> got = checked_oracle(op, c, in, sample_rows(500, 8, 2));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].desc.name, "dw");
  EXPECT_EQ(got[1].values, full[1].values);
  EXPECT_EQ(got[0].values.size(), 8u * 64);
}

}  // namespace
}  // namespace kbench
