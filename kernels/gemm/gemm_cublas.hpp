// The cuBLAS baselines of gemm, through cublasLt, in the op's row-major layouts: C = A.B is
// computed as the column-major C^T = B^T . A^T (a row-major [R, C] matrix is a column-major
// [C, R] one), so no transpose or copy is added to what cuBLAS does.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "harness/problem.hpp"

namespace kbench::gemm {

enum class CublasPick {
  first,  // the default heuristic's first algorithm (what a caller of cublasLtMatmul gets)
  best,   // the fastest of the heuristic's top kBestCandidates, each timed once on first use
};

enum class CublasMath {
  exact,  // CUBLAS_COMPUTE_32F: float32 accumulation, float32 products for float32 inputs
  tf32,   // CUBLAS_COMPUTE_32F_FAST_TF32 (float32 inputs only)
};

inline constexpr int kBestCandidates = 16;
// The workspace cublasLt may use: 32 MiB, what NVIDIA recommends for Hopper.
inline constexpr std::size_t kCublasWorkspace = std::size_t{32} << 20;

// C = A.B on `stream`. The handle, descriptors and algorithm are made on the first call for a
// (device, case, layout) and cached; with `best`, that first call also times the candidates.
// a_transposed: A lies in memory as A^T ([K, M] rows); b_transposed: B as B^T ([N, K] rows).
void launch_cublas(CublasPick pick, CublasMath math, const DeviceTensor& a, const DeviceTensor& b,
                   const DeviceTensor& c, void* workspace, std::size_t workspace_bytes, cudaStream_t stream,
                   bool a_transposed = false, bool b_transposed = false);

// The algorithm chosen for a case (JSON object text: the candidate's index among the
// heuristic's, how many there were, its algorithm and tile ids); "" before any launch.
std::string cublas_plan(CublasPick pick, CublasMath math, const Case& c);

}  // namespace kbench::gemm
