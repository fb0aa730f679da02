// softmax: y = exp(x - max) / sum exp(x - max) over each row. Reads and writes rows x cols.
// The input is a [rows, cols] view with the case's row stride; the output is contiguous.
#include <cmath>

#include "kernels/common/input_kinds.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_op.hpp"

namespace kbench::rows {

Op make_softmax_op() {
  Op op = make_row_op("softmax", "softmax over each row, float32 inside");
  op.inputs = [](const Case& c) { return std::vector<TensorDesc>{row_input(c, "x")}; };
  op.outputs = [](const Case& c) { return std::vector<TensorDesc>{row_output(c, "y", cols_of(c))}; };
  // Probe inputs beyond random: large logits in [-1e4, 1e4] (float16's spacing there is 8, so
  // the max stands apart and nearly every other exp underflows; x log2(e) stays far from
  // overflow in every dtype), constant rows (of such logits: every output 1 / width) and a
  // spike of 16 in each row of random logits (one output near 1, the others e^-12 to e^-20
  // of it, where the exponent's error grows with |x - max| and float16 is subnormal).
  op.input_kinds = {InputKind::random, InputKind::large, InputKind::constant, InputKind::spike};
  op.generate = [](const Case& c, std::vector<HostTensor>& in, Rng& rng) {
    switch (c.input_kind) {
      case InputKind::large: fill_uniform(in[0], rng, -1e4, 1e4); break;
      case InputKind::constant: fill_constant_rows(in[0], rng, -1e4, 1e4); break;
      case InputKind::spike: add_spike_per_row(in[0], rng, -4.0, 4.0, 16.0); break;
      default: fill_uniform(in[0], rng, -4.0, 4.0);
    }
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    HostTensor out{row_output(c, "y", cols_of(c)), std::vector<double>(in[0].values.size())};
    softmax_rows(as_matrix(in[0]), as_matrix(out));
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
  op.traffic = [](const Case&) { return TrafficMix{1, 1}; };
  return op;
}

}  // namespace kbench::rows
