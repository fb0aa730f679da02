// gemm_step: a linear layer's training step as one unit, C = A.B, then dA = dC.B^T and
// dB = A^T.dC (each behind gemm_backward's flags), against cuBLAS doing the same three
// products. Step inputs A, B, dC; outputs C, then dA and dB as asked. The variants run the
// parts' registered variants back to back (kernels/common/step.hpp); the backward reads A and
// B from the step's inputs, not the forward's output.
#include <algorithm>
#include <cmath>

#include "kernels/common/input_kinds.hpp"
#include "kernels/common/step.hpp"
#include "kernels/gemm/gemm_op.hpp"

namespace kbench::gemm {

namespace {

bool wants_da(const Case& c) { return c.param("da") != 0; }
bool wants_db(const Case& c) { return c.param("db") != 0; }

StepWiring gemm_step_wiring(const Case& c) {
  StepWiring w{{{StepSlot::input, 0}, {StepSlot::input, 1}}, {0}, {{StepSlot::input, 2}}, {}};
  std::size_t next = 1;
  if (wants_da(c)) w.backward_inputs.push_back({StepSlot::input, 1}), w.backward_outputs.push_back(next++);
  if (wants_db(c)) w.backward_inputs.push_back({StepSlot::input, 0}), w.backward_outputs.push_back(next++);
  return w;
}

int step_grid_bits(const Case& c) { return grid_bits(std::max({m_of(c), n_of(c), k_of(c)})); }

// A, B and dC on one grid, exact for the three products' inner dimensions (K, N and M).
void generate(const Case& c, std::vector<HostTensor>& in, Rng& rng) { fill_gemm_inputs(c, in, rng, step_grid_bits(c)); }

// C: gemm's tolerance for K; the gradients: gemm_backward's. Both assume inputs on a grid exact
// for their own inner dimension, which the step's coarser-or-equal grid is; where no grid is
// exact (a dimension above 2^24), the float32 rule applies to every output.
Tolerance tolerance(const StepParts& p, const Case& c, std::size_t output) {
  if (output == 0) {
    if (c.dtype != DType::f32 && step_grid_bits(c) < 0)
      return Tolerance{4 * std::ldexp(1.0, -24) * static_cast<double>(k_of(c)), dtype_epsilon(c.dtype),
                       "float32 sum of K products (4 u K) and one rounding to the dtype"};
    return p.forward.tolerance(part_case(p.forward, c), 0);
  }
  return p.backward.tolerance(part_case(p.backward, c), output - 1);
}

}  // namespace

void register_gemm_step(Registry& r) {
  register_step(r, StepDefinition{"gemm_step", "C = A.B, then dA = dC.B^T and dB = A^T.dC: a linear layer's step",
                                  "gemm", "gemm_backward", gemm_step_wiring, generate, tolerance,
                                  {{"auto", false, "the autotuned forward, then the backward's auto (wgmma on sm_90, else mma)", "auto",
                                    "auto"},
                                   {"wgmma", false, "the Hopper kernel (128x256) for all three products", "wgmma_128x256",
                                    "wgmma"},
                                   {"cublas", true, "cublasLt for all three products, first algorithm", "cublas", "cublas"},
                                   {"cublas_best", true, "cublasLt for all three, the best of 16 candidates each",
                                    "cublas_best", "cublas_best"}}});
}

}  // namespace kbench::gemm
