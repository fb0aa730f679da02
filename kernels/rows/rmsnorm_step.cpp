// rmsnorm_step: rmsnorm's forward, then rmsnorm_backward on its h, as one training step:
//   h = x + r,  y = h * rsqrt(mean(h^2) + eps) * w            (rmsnorm_op.cpp)
//   dx = rstd (dy w - n mean(dy w n)) + dh,  dw = sum_rows dy n  (rmsnorm_backward_op.cpp)
// Reads x, r, dy and dh ([rows, cols], the case's row stride) and w; writes h, y, dx
// (contiguous) and dw. Parameters are rmsnorm_backward's: eps, dh (0: no residual gradient),
// frozen (1: no dw). The variants run the two ops' registered variants back to back
// (kernels/common/step.hpp); the backward reads h from the step's output.
#include "kernels/common/input_kinds.hpp"
#include "kernels/common/step.hpp"

namespace kbench::rows {

namespace {

bool has_dh(const Case& c) { return c.param("dh") != 0; }
bool frozen(const Case& c) { return c.param("frozen") != 0; }

// Step inputs x, r, w, dy[, dh]; outputs h, y, dx[, dw]. The forward reads x, r, w and writes
// h, y; the backward reads h (output 0), w, dy[, dh] and writes dx[, dw].
StepWiring rmsnorm_step_wiring(const Case& c) {
  StepWiring w{{{StepSlot::input, 0}, {StepSlot::input, 1}, {StepSlot::input, 2}},
               {0, 1},
               {{StepSlot::output, 0}, {StepSlot::input, 2}, {StepSlot::input, 3}},
               {2}};
  if (has_dh(c)) w.backward_inputs.push_back({StepSlot::input, 4});
  if (!frozen(c)) w.backward_outputs.push_back(3);
  return w;
}

// x, r and w as rmsnorm's generator draws them (so h = x + r lies in [-1.5, 1.5] and w in
// [0.5, 1.5], the inputs rmsnorm_backward's tolerance is written for); dy with a mean of 0.25
// and dh as rmsnorm_backward's generator draws them.
void generate(const Case& c, std::vector<HostTensor>& in, Rng& rng) {
  fill_uniform(in[0], rng, -1.0, 1.0);
  fill_uniform(in[1], rng, -0.5, 0.5);
  fill_uniform(in[2], rng, 0.5, 1.5);
  fill_drawn(in[3].values, rng, [](std::int64_t, Rng& g) { return 0.25 + g.uniform(-1.0, 1.0); });
  if (has_dh(c)) fill_uniform(in[4], rng, -1.0, 1.0);
}

// h and y: rmsnorm's tolerances. dx and dw: rmsnorm_backward's, unchanged: the backward reads
// only h of the forward's outputs, and every variant's h is the dtype's rounding of x + r, as the
// oracle's (rmsnorm's tolerance for h is 0), so the backward sees exactly the oracle's h.
Tolerance tolerance(const StepParts& p, const Case& c, std::size_t output) {
  if (output < 2) return p.forward.tolerance(part_case(p.forward, c), output);
  return p.backward.tolerance(part_case(p.backward, c), output - 2);
}

}  // namespace

void register_rmsnorm_step(Registry& r) {
  register_step(r, StepDefinition{"rmsnorm_step", "residual RMSNorm forward, then its backward on h: a training step",
                                  "rmsnorm", "rmsnorm_backward", rmsnorm_step_wiring, generate, tolerance});
}

}  // namespace kbench::rows
