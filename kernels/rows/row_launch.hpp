// How every row launcher runs a plan (row_sum.cu, softmax.cu, softmax_backward.cu): the dtype
// and the plan kind are switched here once, and the op supplies its kernels as three member
// templates of a small struct:
//   k.template resident<T, K>()   K = plan.vecs (1, 4 or 8 16-byte vectors per thread)
//   k.template looped<T>()
//   k.template split<T>()         after the split plan's preconditions hold
// Each throws before anything is launched when the plan or the workspace does not fit.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "core/errors.hpp"
#include "kernels/common/dispatch.cuh"
#include "kernels/common/launch_ex.cuh"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_plan.hpp"

namespace kbench::rows {

// Checks a resident plan against what the kernels assume (resident_plan_problem), then calls
// f.template operator()<K>() with K = plan.vecs: the resident kernels are instantiated for 1,
// 4 and 8 16-byte vectors per thread (row_plan uses no others).
template <class F>
void dispatch_resident(const std::string& op, const RowRules& rules, const RowPlan& plan, F&& f) {
  if (const std::string why = resident_plan_problem(plan, rules); !why.empty())
    throw std::logic_error(op + ": " + why);
  switch (plan.vecs) {
    case 1: f.template operator()<1>(); return;
    case 4: f.template operator()<4>(); return;
    case 8: f.template operator()<8>(); return;
  }
  throw std::logic_error(op + ": no resident kernel for vecs=" + std::to_string(plan.vecs));
}

// The split plan needs its workspace, and its rows x segments pieces (one block each, and one
// statistics entry each) within 32-bit indices.
inline void check_split(const std::string& op, const RowPlan& plan, const LaunchArgs& a) {
  if (a.workspace == nullptr) throw std::invalid_argument(op + " split: no workspace");
  if (rows_of(a.c) * plan.segments > kIndexLimit) throw std::invalid_argument(op + " split: too many pieces");
}

// The launch's [rows, width] geometry (the stride is the first input's) after checking every
// input as a [rows, width] view and output i as a contiguous [rows, output_cols[i]] one.
struct RowGeometry {
  std::int64_t rows, width, stride;
};

inline RowGeometry checked_row_geometry(const LaunchArgs& a, std::initializer_list<std::int64_t> output_cols) {
  const std::int64_t rows = rows_of(a.c), width = cols_of(a.c);
  for (std::size_t i = 0; i < a.inputs.size(); ++i)
    check_row_tensor((a.c.op + " input " + std::to_string(i)).c_str(), a.inputs[i], rows, width, false);
  std::size_t i = 0;
  for (const std::int64_t cols : output_cols)
    check_row_tensor((a.c.op + " output " + std::to_string(i)).c_str(), a.outputs[i++], rows, cols, true);
  return {rows, width, a.inputs[0].row_stride};
}

// The launch's workspace as floats (the baselines' per-row statistics and temporaries);
// throws when the variant was launched without one.
inline float* float_workspace(const LaunchArgs& a) {
  if (a.workspace == nullptr) throw std::invalid_argument(a.c.op + ": no workspace");
  return static_cast<float*>(a.workspace);
}

// What every op's kernels struct holds: the plan, the launch and its checked geometry (ops
// that need more, such as rmsnorm's eps, add it).
struct PlanLaunch {
  const RowPlan& plan;
  const LaunchArgs& a;
  RowGeometry g;

  // A plan's first kernel, on the launch's stream: overlapping the kernel before it where the
  // launch allows it (a training step's backward after its forward, LaunchArgs::overlap_previous);
  // such a kernel calls wait_for_previous_grid() before it reads what that kernel wrote.
  LaunchShape first(LaunchShape s) const {
    s.stream = a.stream;
    s.overlap_previous = a.overlap_previous;
    return s;
  }
  // A two-kernel plan's second kernel: overlapping the first unless the plan is its serial
  // control (RowPlan::serial), so that its launch and first wave are not a gap between the two.
  LaunchShape second(LaunchShape s) const {
    s.stream = a.stream;
    s.overlap_previous = !plan.serial;
    return s;
  }
};

template <class Kernels>
void launch_row_plan(const RowRules& rules, const RowPlan& plan, const LaunchArgs& a, const Kernels& k) {
  dispatch_dtype(a.c.dtype, [&]<class T>() {
    switch (plan.kind) {
      case RowKind::resident:
        dispatch_resident(a.c.op, rules, plan, [&]<int K>() { k.template resident<T, K>(); });
        break;
      case RowKind::looped: k.template looped<T>(); break;
      case RowKind::split:
        check_split(a.c.op, plan, a);
        k.template split<T>();
        break;
    }
  });
  KB_CUDA_LAUNCH();
}

}  // namespace kbench::rows
