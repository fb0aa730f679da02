// softmax_backward: dx = y * (dy - dot(y, dy)) per row. Reads y and dy, writes dx (3 x rows x
// cols elements). Inputs are [rows, cols] views with the case's row stride; dx is contiguous.
#include <algorithm>
#include <cmath>

#include "kernels/common/input_kinds.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_op.hpp"

namespace kbench::rows {

namespace {

// The largest y of the case's inputs: e^4 / width for a softmax of logits in [-2, 2], up to 1
// for a spike (one logit far above the rest).
double largest_y(const Case& c) {
  if (c.input_kind == InputKind::spike) return 1.0;
  return std::min(1.0, std::exp(4.0) / static_cast<double>(std::max<std::int64_t>(cols_of(c), 1)));
}

}  // namespace

Op make_softmax_backward_op() {
  Op op = make_row_op("softmax_backward", "dx = y * (dy - dot(y, dy)) per row, float32 inside");
  op.inputs = [](const Case& c) { return std::vector<TensorDesc>{row_input(c, "y"), row_input(c, "dy")}; };
  op.outputs = [](const Case& c) { return std::vector<TensorDesc>{row_output(c, "dx", cols_of(c))}; };
  // y: a real softmax of logits in [-2, 2] (so y <= e^4 / width); dy: mean 0.5, so that a lost
  // part of dot(y, dy) moves every dx visibly (a zero-mean dy would hide it).
  // Probe inputs beyond random: constant rows (y = 1 / width from constant logits, dy one value
  // per row, so that dy - dot(y, dy) cancels to nearly 0 and the dot's float32 error is all
  // that is left) and a spike (logits in [-2, 2] with one of 14 per row: y near 1 there, and
  // the dot's error reaches dx undiminished; largest_y says so to the tolerance).
  op.input_kinds = {InputKind::random, InputKind::constant, InputKind::spike};
  op.generate = [](const Case& c, std::vector<HostTensor>& in, Rng& rng) {
    HostTensor logits{in[0].desc, std::vector<double>(in[0].values.size())};
    if (c.input_kind == InputKind::constant) fill_constant_rows(logits, rng, -2.0, 2.0);
    else if (c.input_kind == InputKind::spike) add_spike_per_row(logits, rng, -2.0, 2.0, 14.0);
    else fill_uniform(logits, rng, -2.0, 2.0);
    softmax_rows(as_matrix(logits), as_matrix(in[0]));
    if (c.input_kind == InputKind::constant) fill_constant_rows(in[1], rng, -0.5, 1.5);
    else fill_drawn(in[1].values, rng, [](std::int64_t, Rng& g) { return 0.5 + g.uniform(-1.0, 1.0); });
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    const auto y = as_matrix(in[0]);
    const auto dy = as_matrix(in[1]);
    HostTensor out{row_output(c, "dx", cols_of(c)), std::vector<double>(in[0].values.size())};
    auto dx = as_matrix(out);
    for_each_row(y.rows(), y.cols(), [&](Eigen::Index r) {
      const double dot = y.row(r).cwiseProduct(dy.row(r)).sum();
      dx.row(r) = y.row(r).cwiseProduct((dy.row(r).array() - dot).matrix());
    });
    return std::vector<HostTensor>{std::move(out)};
  };
  // dot(y, dy) in float32 has an error of at most ~50 u32 * sum |y dy| <= 75 u32 (sum y = 1,
  // |dy| <= 1.5); it reaches dx multiplied by y <= largest_y: the absolute term.
  // dy - dot and the product add 2 u32 relative, the output rounding u; float16 outputs below
  // 2^-14 are subnormal (spacing 2^-24).
  op.tolerance = [](const Case& c, std::size_t) {
    const double atol = 128 * u32() * 1.5 * largest_y(c) + (c.dtype == DType::f16 ? std::ldexp(1.0, -24) : 0.0);
    const double rtol = 4 * u32() + (c.dtype == DType::f32 ? 0.0 : dtype_epsilon(c.dtype));
    return Tolerance{atol, rtol, "float32 dot scaled by the largest y, one output rounding"};
  };
  op.bytes = [](const Case& c) { return 3.0 * rows_of(c) * cols_of(c) * dtype_size(c.dtype); };
  op.traffic = [](const Case&) { return TrafficMix{2, 1}; };
  return op;
}

}  // namespace kbench::rows
