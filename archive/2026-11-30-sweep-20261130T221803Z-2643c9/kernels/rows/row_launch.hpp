// Host-side steps the three row launchers (row_sum.cu, softmax.cu, softmax_backward.cu) share:
// from a plan's vectors per thread to a kernel instantiation, and the split plan's
// preconditions. Each throws before anything is launched.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_plan.hpp"
#include "registry/registry.hpp"

namespace kbench::rows {

// Checks a resident plan against what the kernels assume (resident_plan_problem), then calls
// f.template operator()<K>() with K = plan.vecs: the resident kernels are instantiated for 1,
// 4 and 8 16-byte vectors per thread (row_plan uses no others).
template <class F>
void dispatch_resident(const char* op_name, RowOp op, const RowPlan& plan, F&& f) {
  if (const std::string why = resident_plan_problem(plan, op); !why.empty())
    throw std::logic_error(std::string(op_name) + ": " + why);
  switch (plan.vecs) {
    case 1: f.template operator()<1>(); return;
    case 4: f.template operator()<4>(); return;
    case 8: f.template operator()<8>(); return;
  }
  throw std::logic_error(std::string(op_name) + ": no resident kernel for vecs=" +
                         std::to_string(plan.vecs));
}

// The split plan needs its workspace, and its rows x segments pieces (one block each, and one
// statistics entry each) within 32-bit indices.
inline void check_split(const char* op_name, const RowPlan& plan, std::int64_t rows,
                        const LaunchArgs& a) {
  if (a.workspace == nullptr)
    throw std::invalid_argument(std::string(op_name) + " split: no workspace");
  if (rows * plan.segments > kIndexLimit)
    throw std::invalid_argument(std::string(op_name) + " split: too many pieces");
}

}  // namespace kbench::rows
