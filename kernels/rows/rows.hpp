// The row operator family: row_sum, softmax and softmax_backward. Op definitions and the
// registration are host code (rows_ops.cpp); kernels and launchers are in the .cu files.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/rows/row_plan.hpp"
#include "registry/registry.hpp"

namespace kbench::rows {

// Deliberate faults, for the tests that show a checker can fail. Never set in kbench runs.
enum class Fault : int {
  none = 0,
  drop_last_chunk = 1,   // looped/split forward: the last chunk of each row is neither counted nor written
  lose_partial_dot = 2,  // backward: one warp's part of dot(y, dy) is lost (warp 0, or lane 0
                         // of a warp plan: always a part that holds data)
};

// Launchers: check the contracts, then run `plan`. Workspace: *_workspace_bytes(plan, rows).
void launch_row_sum(const RowPlan& plan, const LaunchArgs& a, Fault f = Fault::none);
void launch_row_sum_cub(const LaunchArgs& a);
std::size_t row_sum_cub_workspace_bytes(const Case& c);
void launch_softmax(const RowPlan& plan, const LaunchArgs& a, Fault f = Fault::none);
void launch_softmax_eager(const LaunchArgs& a);
void launch_softmax_backward(const RowPlan& plan, const LaunchArgs& a, Fault f = Fault::none);
void launch_softmax_backward_eager(const LaunchArgs& a);

std::size_t split_workspace_bytes(const RowPlan& plan, std::int64_t rows, RowOp op);

Op make_row_sum_op();
Op make_softmax_op();
Op make_softmax_backward_op();

}  // namespace kbench::rows
