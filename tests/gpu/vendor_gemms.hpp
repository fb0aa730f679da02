// Which of the GEMM ops' variants are cuBLAS's, for the GEMM GPU tests that check every variant:
// they check these too, except under racecheck (test::vendor_gemms_left_out, gpu_test.hpp).
#pragma once

#include "gpu_test.hpp"
#include "registry/registry.hpp"

namespace kbench::test {

// The baselines that call cublasLt: gemm's cublas, cublas_best, cublas_tf32 and
// cublas_best_tf32, gemm_backward's and gemm_step's cublas and cublas_best. Every auto is
// kbench's and stays in (none of the GEMM ops' autos picks cuBLAS).
inline bool is_cublas_baseline(const Variant& v) { return v.baseline && v.name.rfind("cublas", 0) == 0; }

// Whether a test leaves `v` out of this run: a cuBLAS baseline, under racecheck.
inline bool left_out_here(const Variant& v) { return vendor_gemms_left_out() && is_cublas_baseline(v); }

// How many of the `n` cuBLAS variants that take a case a test checks: all of them, none under
// racecheck. A test's count of the variants it ran adds this to its own, so that a test still
// fails when any other variant is skipped.
inline int cublas_checked(int n) { return vendor_gemms_left_out() ? 0 : n; }

}  // namespace kbench::test
