// add: z = x + y, elementwise. Bytes: read 2n, write n elements; n flops (not counted: the op
// is memory-bound by two orders of magnitude).
#include "kernels/add/add.hpp"

#include <cmath>

#include "core/parallel.hpp"
#include "kernels/common/input_kinds.hpp"
#include "kernels/common/vector_op.hpp"

namespace kbench {

Op make_add_op() {
  Op op = make_vector_op("add", "z = x + y, elementwise", "kernels/add/", {"x", "y"}, "z");
  // Probe inputs: magnitudes to a quarter of the dtype's largest (the sum stays finite), y = -x
  // plus noise of 1e-3 (the sum nearly cancels, so only a small allowed error is left; where x
  // and -y lie within a factor 2 the sum is exact), and one repeated value per input. The
  // tolerance below holds for any finite sum.
  op.input_kinds = {InputKind::random, InputKind::large, InputKind::cancelling, InputKind::constant};
  op.generate = [](const Case& c, std::vector<HostTensor>& in, Rng& rng) {
    const double quarter = dtype_max(c.dtype) / 4;
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (c.input_kind == InputKind::large) fill_uniform(in[i], rng, -quarter, quarter);
      else if (c.input_kind == InputKind::constant) fill_constant_rows(in[i], rng, -1.0, 1.0);
      else fill_uniform(in[i], rng, -1.0, 1.0);
    }
    if (c.input_kind == InputKind::cancelling)
      fill_drawn(in[1].values, rng, [x = in[0].values.data()](std::int64_t k, Rng& g) { return -x[k] + g.uniform(-1e-3, 1e-3); });
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    HostTensor z{vector_tensor(c, "z"), std::vector<double>(in[0].values.size())};
    const double *x = in[0].values.data(), *y = in[1].values.data();
    double* const out = z.values.data();
    parallel_pieces(static_cast<std::int64_t>(z.values.size()), kParallelGrain,
                    [=](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) out[i] = x[i] + y[i];
    });
    return std::vector<HostTensor>{std::move(z)};
  };
  // The sum of two representable values is computed in float32 and rounded once to the output
  // type: at most half an ulp, i.e. the unit roundoff u relative (float32's own rounding adds
  // at most 2^-24 more, below u for the 16-bit types). The absolute term covers results in
  // float16's subnormal range, where the spacing is 2^-24.
  op.tolerance = [](const Case& c, std::size_t) {
    const double u = dtype_epsilon(c.dtype);
    const double rtol = c.dtype == DType::f32 ? u : u + std::ldexp(1.0, -24);
    return Tolerance{std::ldexp(1.0, -25), rtol, "one rounding of the exact sum to the dtype"};
  };
  op.bytes = [](const Case& c) { return 3.0 * c.shape.at(0) * dtype_size(c.dtype); };
  op.traffic = [](const Case&) { return TrafficMix{2, 1}; };
  return op;
}

}  // namespace kbench
