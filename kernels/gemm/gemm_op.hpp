// The gemm op: C [M, N] = A [M, K] . B [K, N], row-major, C in the inputs' dtype (16-bit inputs
// accumulate in float32). What is computed and how it is checked (gemm_op.cpp, host code); the
// variants live beside their kernels and register in gemm_family.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "registry/registry.hpp"

namespace kbench::gemm {

inline std::int64_t m_of(const Case& c) { return c.shape.at(0); }
inline std::int64_t n_of(const Case& c) { return c.shape.at(1); }
inline std::int64_t k_of(const Case& c) { return c.shape.at(2); }

Op make_gemm_op();
Op make_gemm_backward_op();

// The 16-bit generator's grid: inputs are multiples of 2^-grid_bits(K) in [-1, 1], coarse
// enough that every product and every partial sum of K of them is exact in float32 (see
// gemm_op.cpp). -1 when no grid makes K products exact (K > 2^24).
int grid_bits(std::int64_t k);

// The GEMM ops' inputs: 16-bit ones uniform on the multiples of 2^-bits in [-1, 1] (bits from
// grid_bits of the inner dimensions the op's products sum over), float32 ones, and any where
// bits < 0, uniform in [-1, 1].
void fill_gemm_inputs(const Case& c, std::vector<HostTensor>& in, Rng& rng, int bits);

// The tolerances of gemm_op.cpp, exposed for the CPU tests of their argument.
Tolerance gemm_tolerance(DType t, std::int64_t k);
// A float32 GEMM whose products take tf32 inputs (10-bit mantissas): gemm's tf32 variants.
Tolerance tf32_tolerance(std::int64_t k);

// Rows checked of a case: every row up to kFullCheckMacs multiply-adds, else kSampledRows.
inline constexpr double kFullCheckMacs = 1u << 30;
inline constexpr std::int64_t kSampledRows = 256;
std::int64_t gemm_check_rows(const Case& c);

// The FP64 product of the given rows of A (ascending) with B, packed in their order.
std::vector<double> reference_rows(const HostTensor& a, const HostTensor& b, const std::vector<std::int64_t>& rows);

}  // namespace kbench::gemm
