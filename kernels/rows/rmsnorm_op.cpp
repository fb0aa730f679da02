// rmsnorm: the residual RMSNorm forward of a transformer block,
//   h = x + r               (rounded once to the dtype: the residual stream as stored)
//   y = h * rsqrt(mean(h^2) + eps) * w
// returning h and y. Reads x and r ([rows, cols], the case's row stride) and w ([cols]); writes
// h and y (contiguous): 4 x rows x cols elements, plus cols for w.
#include <algorithm>
#include <cmath>

#include "kernels/common/input_kinds.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_op.hpp"
#include "kernels/rows/rmsnorm_op.hpp"

namespace kbench::rows {

OpParam rmsnorm_eps_param() {
  // Below 1e-30, eps is not a normal float32 and the kernels, which add it in float32, would
  // not see it; above 1 it is no longer a guard against a zero row.
  return OpParam{"eps", 1e-6, 1e-30, 1.0, "added to mean(h^2) before the rsqrt"};
}

TensorDesc weight_desc(const Case& c, const char* name) { return TensorDesc{name, c.dtype, 1, cols_of(c), cols_of(c)}; }

double large_h_bound(const Case& c) {
  const double width = static_cast<double>(std::max<std::int64_t>(cols_of(c), 1));
  return std::min(dtype_max(c.dtype) / 2, std::sqrt(dtype_max(DType::f32) / (4 * width)));
}

std::vector<double> inverse_rms(const HostTensor& h, double eps) {
  std::vector<double> rstd(static_cast<std::size_t>(h.desc.rows));
  const auto m = as_matrix(h);
  for_each_row(m.rows(), m.cols(), [&](Eigen::Index r) {
    rstd[static_cast<std::size_t>(r)] = 1.0 / std::sqrt(m.row(r).squaredNorm() / static_cast<double>(m.cols()) + eps);
  });
  return rstd;
}

Op make_rmsnorm_op() {
  Op op = make_row_op("rmsnorm", "h = x + r; y = h * rsqrt(mean(h^2) + eps) * w, float32 inside");
  op.params = {rmsnorm_eps_param()};
  op.inputs = [](const Case& c) {
    return std::vector<TensorDesc>{row_input(c, "x"), row_input(c, "r"), weight_desc(c, "w")};
  };
  op.outputs = [](const Case& c) {
    return std::vector<TensorDesc>{row_output(c, "h", cols_of(c)), row_output(c, "y", cols_of(c))};
  };
  // x and r of either sign and mixed magnitude (their sum rounds), w around 1 and never 0, so
  // that a dropped or misplaced weight shows.
  // Probe inputs beyond random, w always as above: large (x and r scaled so that |h| reaches
  // large_h_bound: y does not change with the scale of h), cancelling (r = -x + 1e-2 noise, so
  // that h = x + r is small and mean(h^2) meets eps) and constant rows of x and of r.
  op.input_kinds = {InputKind::random, InputKind::large, InputKind::cancelling, InputKind::constant};
  op.generate = [](const Case& c, std::vector<HostTensor>& in, Rng& rng) {
    const double scale = c.input_kind == InputKind::large ? large_h_bound(c) / 1.5 : 1.0;
    if (c.input_kind == InputKind::constant) {
      fill_constant_rows(in[0], rng, -1.0, 1.0);
      fill_constant_rows(in[1], rng, -0.5, 0.5);
    } else {
      fill_uniform(in[0], rng, -scale, scale);
      fill_uniform(in[1], rng, -0.5 * scale, 0.5 * scale);
    }
    if (c.input_kind == InputKind::cancelling)
      fill_drawn(in[1].values, rng, [x = in[0].values.data()](std::int64_t k, Rng& g) { return -x[k] + g.uniform(-1e-2, 1e-2); });
    fill_uniform(in[2], rng, 0.5, 1.5);
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    HostTensor h{row_output(c, "h", cols_of(c)), std::vector<double>(in[0].values.size())};
    HostTensor y{row_output(c, "y", cols_of(c)), std::vector<double>(in[0].values.size())};
    const auto x = as_matrix(in[0]), r = as_matrix(in[1]);
    as_matrix(h) = x + r;
    encode(c.dtype, h.values);  // h is the dtype's rounding of the exact sum
    const std::vector<double> rstd = inverse_rms(h, c.param("eps"));
    const auto hm = as_matrix(h);
    auto ym = as_matrix(y);
    const auto w = as_matrix(in[2]);
    for_each_row(hm.rows(), hm.cols(), [&](Eigen::Index row) {
      ym.row(row) = hm.row(row).cwiseProduct(w.row(0)) * rstd[static_cast<std::size_t>(row)];
    });
    return std::vector<HostTensor>{std::move(h), std::move(y)};
  };
  // h: the kernels add in the dtype with one rounding (16-bit pairs in one instruction,
  // float32 in float32), as the oracle rounds the exact sum: no error at all.
  // y: the row's sum of squares in float32 (at most 32 serial fmas per thread, then 10 tree
  // levels; chunks compensated) is off by under 48 u32 relative, which reaches rsqrt halved;
  // rsqrtf adds 2 ulp and the two products 2 u32: under 32 u32, so 64 u32, then one rounding
  // to the output dtype (u). float16 outputs below 2^-14 are subnormal (spacing 2^-24).
  op.tolerance = [](const Case& c, std::size_t output) {
    if (output == 0) return Tolerance{0, 0, "one rounding of the exact sum x + r, as the oracle"};
    const double atol = c.dtype == DType::f16 ? std::ldexp(1.0, -24) : 0.0;
    const double rtol = 64 * u32() + (c.dtype == DType::f32 ? 0.0 : dtype_epsilon(c.dtype));
    return Tolerance{atol, rtol, "float32 sum of squares and rsqrt: 64 u32, one output rounding"};
  };
  op.bytes = [](const Case& c) {
    return (4.0 * static_cast<double>(rows_of(c)) + 1.0) * static_cast<double>(cols_of(c)) * dtype_size(c.dtype);
  };
  op.traffic = [](const Case&) { return TrafficMix{2, 2}; };  // x, r in; h, y out (w is one row)
  return op;
}

}  // namespace kbench::rows
