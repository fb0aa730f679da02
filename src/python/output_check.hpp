// Outputs against a reference, element by element, judged as harness/prepare.hpp check_variant
// judges a kernel against the oracle (harness/compare.hpp does the comparing): the first element
// off the tolerance fails the check and is named; otherwise max_err and tolerance are those of
// the element that came closest to its limit.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "harness/problem.hpp"
#include "python/array_view.hpp"
#include "record/result.hpp"

namespace kbench::python {

// `tols`: one tolerance for every output, or one per output (an op's outputs may differ in the
// error their sums carry). Throws UsageError when the counts or element counts differ (`label`
// names the outputs' owner).
CheckInfo compare_arrays(const std::vector<ArrayView>& outputs, const std::vector<ArrayView>& reference,
                         const std::vector<Tolerance>& tols, cudaStream_t stream, const std::string& label);

}  // namespace kbench::python
