// rmsnorm_backward: the gradient of rmsnorm (rmsnorm_op.cpp) from the stored h, the weight w,
// the upstream gradient dy and, when the residual stream carries one, dh:
//   rstd = rsqrt(mean(h^2) + eps)            recomputed per row
//   g = dy * w,   n = h * rstd
//   dx = rstd * (g - n * mean(g * n)) + dh   (= dr: x and r enter h alike)
//   dw = sum over rows of dy * n             (unless the weight is frozen)
// Reads h, dy and dh ([rows, cols], the case's row stride) and w; writes dx (contiguous) and
// dw. Parameters: eps; dh (1: the residual gradient is an input, 0: absent); frozen (1: dw is
// neither computed nor written).
#include <cmath>

#include "kernels/common/input_kinds.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_op.hpp"
#include "kernels/rows/rmsnorm_op.hpp"

namespace kbench::rows {

namespace {

bool has_dh(const Case& c) { return c.param("dh") != 0; }
bool frozen(const Case& c) { return c.param("frozen") != 0; }

}  // namespace

Op make_rmsnorm_backward_op() {
  Op op = make_row_op("rmsnorm_backward", "dx = rstd (dy w - n mean(dy w n)) + dh, dw = sum_rows dy n");
  op.params = {rmsnorm_eps_param(),
               OpParam{"dh", 1, 0, 1, "1: the residual stream's gradient dh is an input and added to dx"},
               OpParam{"frozen", 0, 0, 1, "1: the weight is frozen, dw is neither computed nor written"}};
  op.inputs = [](const Case& c) {
    std::vector<TensorDesc> in{row_input(c, "h"), weight_desc(c, "w"), row_input(c, "dy")};
    if (has_dh(c)) in.push_back(row_input(c, "dh"));
    return in;
  };
  op.outputs = [](const Case& c) {
    std::vector<TensorDesc> out{row_output(c, "dx", cols_of(c))};
    if (!frozen(c)) out.push_back(weight_desc(c, "dw"));
    return out;
  };
  // h as rmsnorm leaves it (x + r, of either sign), w around 1, dy with a mean of 0.25 and dh of
  // its own, so that a lost mean(g n) term, a lost dh or a misplaced weight moves every output.
  // Probe inputs beyond random: large h (to large_h_bound: n = h rstd and dw do not change with
  // the scale of h, and dx's rstd term shrinks with it, so the tolerances hold unscaled) and
  // constant rows of h (|h| in [0.5, 1.5], so rstd <= 2 as below) and dy, with w one repeated
  // value: g = dy w is then parallel to n, and dx = rstd (g - n mean(g n)) cancels to about 0
  // plus dh, leaving the float32 errors of rstd and the mean alone.
  op.input_kinds = {InputKind::random, InputKind::large, InputKind::constant};
  op.generate = [](const Case& c, std::vector<HostTensor>& in, Rng& rng) {
    if (c.input_kind == InputKind::constant) {
      fill_constant_rows(in[0], rng, 0.5, 1.5);
      const auto cols = static_cast<std::size_t>(in[0].desc.cols);
      for (std::size_t k = 0; k < in[0].values.size(); ++k)
        if (k / cols % 2 == 1) in[0].values[k] = -in[0].values[k];  // odd rows negative: both signs
      fill_constant_rows(in[1], rng, 0.5, 1.5);
      fill_constant_rows(in[2], rng, -0.75, 1.25);
    } else {
      const double h = c.input_kind == InputKind::large ? large_h_bound(c) : 1.5;
      fill_uniform(in[0], rng, -h, h);
      fill_uniform(in[1], rng, 0.5, 1.5);
      fill_drawn(in[2].values, rng, [](std::int64_t, Rng& g) { return 0.25 + g.uniform(-1.0, 1.0); });
    }
    if (has_dh(c)) fill_uniform(in[3], rng, -1.0, 1.0);
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    const auto h = as_matrix(in[0]), w = as_matrix(in[1]), dy = as_matrix(in[2]);
    const std::vector<double> rstd = inverse_rms(in[0], c.param("eps"));
    HostTensor dx{row_output(c, "dx", cols_of(c)), std::vector<double>(in[0].values.size())};
    auto dxm = as_matrix(dx);
    const double width = static_cast<double>(cols_of(c));
    for_each_row(h.rows(), h.cols(), [&](Eigen::Index r) {
      const double s = rstd[static_cast<std::size_t>(r)];
      const Eigen::RowVectorXd g = dy.row(r).cwiseProduct(w.row(0));
      const Eigen::RowVectorXd n = h.row(r) * s;
      dxm.row(r) = s * (g - n * (g.dot(n) / width));
      if (has_dh(c)) dxm.row(r) += as_matrix(in[3]).row(r);
    });
    std::vector<HostTensor> out{std::move(dx)};
    if (!frozen(c)) {
      HostTensor dw{weight_desc(c, "dw"), std::vector<double>(static_cast<std::size_t>(cols_of(c)), 0.0)};
      for (Eigen::Index r = 0; r < h.rows(); ++r)
        as_matrix(dw).row(0) += dy.row(r).cwiseProduct(h.row(r)) * rstd[static_cast<std::size_t>(r)];
      out.push_back(std::move(dw));
    }
    return out;
  };
  // dx: rstd is off by ~32 u32 relative (rmsnorm's y); the mean of g n is a float32 sum over
  // the row (at most 32 serial fmas per thread, 10 tree levels, chunks compensated: under
  // 48 u32 of sum |g n| / width <= 1.5 x 1.5 x rstd); with |g| <= 1.25 x 1.5 and rstd <= ~2 for
  // these inputs, dx = rstd g - ... + dh carries under 48 u32 x (2 x 1.9 + 2 x 2.3) absolute:
  // 512 u32 covers it twice over, and a lost dh (|dh| up to 1) or mean term fails by orders of
  // magnitude. One output rounding: rtol u. float16's subnormals: 2^-24.
  // dw: each of rows terms |dy n| <= 1.25 x 1.5 x 2, summed in float32 per block over its rows
  // and then over the blocks' partials in a fixed order: errors of random sign grow like
  // sqrt(rows), so 16 u32 sqrt(rows) x 4 has room, yet a 16-bit accumulator (2^-11 relative per
  // add) fails.
  op.tolerance = [](const Case& c, std::size_t output) {
    const double u = c.dtype == DType::f32 ? 0.0 : dtype_epsilon(c.dtype);
    const double subnormal = c.dtype == DType::f16 ? std::ldexp(1.0, -24) : 0.0;
    if (output == 0) return Tolerance{512 * u32() + subnormal, 4 * u32() + u, "float32 rstd and row mean: 512 u32"};
    const double rows = static_cast<double>(std::max<std::int64_t>(rows_of(c), 1));
    return Tolerance{64 * u32() * std::sqrt(rows) + subnormal, 4 * u32() + u,
                     "float32 column sums over rows: 16 u32 sqrt(rows) of terms up to 4"};
  };
  // Each input read once, dx and dw written once (the per-block partials of dw are the
  // kernels' business, not the op's).
  op.bytes = [](const Case& c) {
    const double rc = static_cast<double>(rows_of(c)) * static_cast<double>(cols_of(c));
    const double inputs = (has_dh(c) ? 3 : 2) * rc + static_cast<double>(cols_of(c));
    const double outputs = rc + (frozen(c) ? 0.0 : static_cast<double>(cols_of(c)));
    return (inputs + outputs) * dtype_size(c.dtype);
  };
  op.traffic = [](const Case& c) { return TrafficMix{has_dh(c) ? 3 : 2, 1}; };  // h, dy (, dh) in; dx out
  return op;
}

}  // namespace kbench::rows
