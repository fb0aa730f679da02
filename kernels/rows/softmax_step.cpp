// softmax_step: softmax's forward, then softmax_backward on its output, as one training step:
//   y = softmax(x),  dx = y * (dy - dot(y, dy))   per row
// Reads x and dy ([rows, cols], the case's row stride); writes y and dx (contiguous). The
// variants run the two ops' registered variants back to back (kernels/common/step.hpp); the
// backward reads y from the step's output, as a framework's autograd reads the saved output.
#include <algorithm>
#include <cmath>

#include "kernels/common/input_kinds.hpp"
#include "kernels/common/step.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_op.hpp"

namespace kbench::rows {

namespace {

StepWiring softmax_step_wiring(const Case&) {
  return StepWiring{{{StepSlot::input, 0}}, {0}, {{StepSlot::output, 0}, {StepSlot::input, 1}}, {1}};
}

// x: logits in [-2, 2], the range softmax_backward's generator draws its y from, so that the
// backward's tolerance (written for y <= e^4 / width) holds for the y the forward hands it;
// softmax's own tolerance does not depend on the range. dy: mean 0.5, as softmax_backward's.
void generate(const Case&, std::vector<HostTensor>& in, Rng& rng) {
  fill_uniform(in[0], rng, -2.0, 2.0);
  fill_drawn(in[1].values, rng, [](std::int64_t, Rng& g) { return 0.5 + g.uniform(-1.0, 1.0); });
}

// y: softmax's tolerance. dx: softmax_backward's, widened by what the forward's error does to
// it. The backward reads the device's y, within softmax's tolerance (tf) of the oracle's exact
// y: a relative error d <= tf.rtol in y_i moves dx_i = y_i (dy_i - dot) by d relative (rtol)
// and dot(y, dy) by at most d sum |y dy| <= 1.5 d, which reaches dx_i times y_i <= ymax
// (atol); tf.atol (outputs too small for a relative bound) moves dx_i by |dy_i - dot| <= 3 of
// it, and the dot by at most 1.5 width tf.atol, times y_i <= ymax, with ymax width <= e^4.
Tolerance tolerance(const StepParts& p, const Case& c, std::size_t output) {
  const Tolerance tf = p.forward.tolerance(part_case(p.forward, c), 0);
  if (output == 0) return tf;
  const Tolerance tb = p.backward.tolerance(part_case(p.backward, c), 0);
  const double ymax = std::min(1.0, std::exp(4.0) / static_cast<double>(std::max<std::int64_t>(cols_of(c), 1)));
  return Tolerance{tb.atol + 1.5 * ymax * tf.rtol + (3 + 1.5 * std::exp(4.0)) * tf.atol, tb.rtol + tf.rtol,
                   "softmax_backward's tolerance plus softmax's error in the y it reads"};
}

}  // namespace

void register_softmax_step(Registry& r) {
  register_step(r, StepDefinition{"softmax_step", "softmax forward, then its backward on y: a training step",
                                  "softmax", "softmax_backward", softmax_step_wiring, generate, tolerance});
}

}  // namespace kbench::rows
