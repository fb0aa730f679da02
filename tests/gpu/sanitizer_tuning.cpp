// Under compute-sanitizer (scripts/sanitize.sh sets KBENCH_UNDER_SANITIZER), `auto`'s GEMM tuner
// times each candidate with one cold launch instead of three: the tests check what the kernels
// compute, not which is fastest, and every instrumented launch is slow (gemm_autotune.hpp).
// Done before any test runs, for the whole process.
#include "gpu_test.hpp"
#include "kernels/gemm/gemm_autotune.hpp"

namespace {
const bool kTuningSet = [] {
  if (kbench::test::under_sanitizer()) kbench::gemm::set_tuning_samples(1);
  return true;
}();
}  // namespace
