// Registration of the row ops and their variants: `auto` follows row_plan, every plan can be
// run by name, and each op has its baseline. Builds tables only; nothing here touches the GPU
// until a launcher or a workspace size is asked for.
#include <cuda_runtime_api.h>

#include <optional>

#include "core/errors.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/rows.hpp"

namespace kbench::rows {

std::size_t split_workspace_bytes(const RowPlan& plan, std::int64_t rows, RowOp op) {
  if (plan.kind != RowKind::split) return 0;
  const std::size_t per = op == RowOp::softmax ? 2 * sizeof(float) : sizeof(float);
  const std::size_t counters = op == RowOp::row_sum ? rows * sizeof(unsigned) : 0;  // per-row done counts
  return static_cast<std::size_t>(rows) * plan.segments * per + counters;
}

}  // namespace kbench::rows

namespace kbench {

namespace {

using namespace kbench::rows;

std::int64_t rows_of(const Case& c) { return c.shape.at(0); }
std::int64_t cols_of(const Case& c) { return c.shape.at(1); }

std::string shape_problem(const Case& c) {
  if (c.shape.size() != 2) return "row ops take a [rows, cols] shape";
  if (cols_of(c) > kMaxWidth) return "width above 2^20";
  if (rows_of(c) > kIndexLimit) return "more rows than a grid can hold";
  return {};
}

RowPlan plan_for(const Case& c, RowOp op, const Forced* forced) {
  const DeviceLimits& dev = current_device_limits();
  if (forced) return forced_plan(*forced, rows_of(c), cols_of(c), c.dtype, dev, op);
  return row_plan(rows_of(c), cols_of(c), c.dtype, dev, op);
}

using Launcher = void (*)(const RowPlan&, const LaunchArgs&, Fault);

// One variant per plan: `forced` null is the auto choice.
Variant plan_variant(const std::string& op_name, RowOp op, const std::string& name,
                     std::optional<Forced> forced, std::string summary, Launcher launch) {
  Variant v;
  v.op = op_name;
  v.name = name;
  v.summary = std::move(summary);
  v.unsupported = [op, forced](const Case& c) {
    std::string why = shape_problem(c);
    if (why.empty() && forced) why = plan_unsupported(*forced, rows_of(c), cols_of(c), c.dtype, op);
    return why;
  };
  v.workspace_bytes = [op, forced](const Case& c) {
    if (!shape_problem(c).empty() || rows_of(c) == 0 || cols_of(c) == 0) return std::size_t{0};
    return split_workspace_bytes(plan_for(c, op, forced ? &*forced : nullptr), rows_of(c), op);
  };
  v.launch = [op, forced, launch](const LaunchArgs& a) {
    launch(plan_for(a.c, op, forced ? &*forced : nullptr), a, Fault::none);
  };
  return v;
}

}  // namespace

void register_row_sum(Registry& r) {
  r.add_op(make_row_sum_op());
  const std::string op = "row_sum";
  r.add_variant(plan_variant(op, RowOp::row_sum, "auto", std::nullopt, "follows row_plan", launch_row_sum));
  r.add_variant(plan_variant(op, RowOp::row_sum, "warp", Forced::resident_warp,
                             "1-32 lanes per row, 1-8 16-byte loads each, shuffles only", launch_row_sum));
  r.add_variant(plan_variant(op, RowOp::row_sum, "block", Forced::resident_block,
                             "a block of 64-1024 threads per row, 4 16-byte loads each", launch_row_sum));
  r.add_variant(plan_variant(op, RowOp::row_sum, "looped", Forced::looped,
                             "a block per row in chunks, compensated lane sums", launch_row_sum));
  r.add_variant(plan_variant(op, RowOp::row_sum, "split", Forced::split,
                             "row pieces across blocks, partials added in a fixed order", launch_row_sum));
  Variant cub;
  cub.op = op;
  cub.name = "cub";
  cub.baseline = true;
  cub.summary = "cub::DeviceSegmentedReduce::Reduce, float32 accumulator";
  cub.unsupported = shape_problem;
  cub.workspace_bytes = [](const Case& c) {
    return shape_problem(c).empty() ? row_sum_cub_workspace_bytes(c) : std::size_t{0};
  };
  cub.launch = launch_row_sum_cub;
  r.add_variant(std::move(cub));
}

void register_softmax(Registry& r) {
  r.add_op(make_softmax_op());
  std::string op = "softmax";
  r.add_variant(plan_variant(op, RowOp::softmax, "auto", std::nullopt, "follows row_plan", launch_softmax));
  r.add_variant(plan_variant(op, RowOp::softmax, "single_block", Forced::resident_any,
                             "row held in registers, one read of x", launch_softmax));
  r.add_variant(plan_variant(op, RowOp::softmax, "looped", Forced::looped,
                             "online max and sum per lane over chunks, then a second read", launch_softmax));
  r.add_variant(plan_variant(op, RowOp::softmax, "split", Forced::split,
                             "per-piece statistics kernel, then a merge-and-write kernel", launch_softmax));
  Variant eager;
  eager.op = op;
  eager.name = "eager";
  eager.baseline = true;
  eager.summary = "three kernels: row max, row sum of exp, normalize";
  eager.unsupported = shape_problem;
  eager.workspace_bytes = [](const Case& c) { return static_cast<std::size_t>(2 * rows_of(c)) * sizeof(float); };
  eager.launch = launch_softmax_eager;
  r.add_variant(eager);
}

void register_softmax_backward(Registry& r) {
  r.add_op(make_softmax_backward_op());
  const std::string op = "softmax_backward";
  r.add_variant(plan_variant(op, RowOp::softmax_backward, "auto", std::nullopt, "follows row_plan",
                             launch_softmax_backward));
  r.add_variant(plan_variant(op, RowOp::softmax_backward, "single_block", Forced::resident_any,
                             "y and dy held in registers, one read of each", launch_softmax_backward));
  r.add_variant(plan_variant(op, RowOp::softmax_backward, "looped", Forced::looped,
                             "dot over chunks, then a second read of y and dy", launch_softmax_backward));
  r.add_variant(plan_variant(op, RowOp::softmax_backward, "split", Forced::split,
                             "per-piece partial dots, then a fixed-order sum and write", launch_softmax_backward));
  Variant eager;
  eager.op = op;
  eager.name = "eager";
  eager.baseline = true;
  eager.unsupported = shape_problem;
  eager.summary = "two kernels: row dot(y, dy), then elementwise dx";
  eager.workspace_bytes = [](const Case& c) { return static_cast<std::size_t>(rows_of(c)) * sizeof(float); };
  eager.launch = launch_softmax_backward_eager;
  r.add_variant(std::move(eager));
}

}  // namespace kbench
