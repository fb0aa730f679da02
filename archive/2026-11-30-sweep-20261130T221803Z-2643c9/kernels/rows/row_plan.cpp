#include "kernels/rows/row_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace kbench::rows {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// row_sum's resident plan ends at a block of 512 threads x 4 vectors (why: in row_plan).
constexpr std::int64_t kRowSumResidentMaxVecs = 512 * 4;

int pow2_at_least(std::int64_t v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

int vec_elems(DType t) { return static_cast<int>(16 / dtype_size(t)); }

// Resident plan: 64 bytes per thread (4 vectors) is enough in flight when an SM holds 2048
// threads; narrow rows use part of a warp (1 vector per lane up to 32 vectors, then 4, then 8
// vectors per lane for a whole warp), wider rows a block of 64..1024 threads. row_sum skips the
// 8-vector warp plan: at 16384x1024 float32 a 64-thread block with 4 vectors each ran
// 16.77-16.84 us against the warp's 17.04-17.07 in four tuning runs, each on its own H200
// (graph; archive/2026-11-30-rowsum-cub-explore).
//
// float32 softmax holds 8 vectors per thread in its block plan (up to 256 threads, 2048
// vectors): its exps replace the raw vectors in the same 32 registers, so the kernel stays at
// 62 registers and a row takes half the threads. Registers, not threads, cap how many blocks
// an SM holds, so twice the bytes are in flight per SM: 8192x8192 went from 83.2% to 91.9% of
// copy bandwidth (docs/kernels.md). 16-bit exps take twice their raw registers (~100 at 8 vectors),
// and row_sum's 8-vector blocks ran slower, so both keep 4.
RowPlan resident(std::int64_t rows, std::int64_t width, DType dtype, bool force_block, RowOp op) {
  const int v = vec_elems(dtype);
  const std::int64_t nvec = std::max<std::int64_t>(1, ceil_div(width, v));
  RowPlan p;
  p.kind = RowKind::resident;
  if (!force_block && nvec <= 32) {
    p.vecs = 1;
    // At least one lane per element of a vector: a row's scalar head and tail (each under 16
    // bytes, up to 3 or 7 elements) are read one element per lane, so 1 or 2 lanes on a
    // misaligned tiny row (3x7, row 1 starting 14 bytes in) dropped elements.
    p.lanes = std::max(pow2_at_least(nvec), v);
  } else if (!force_block && nvec <= 128) {
    p.vecs = 4;
    p.lanes = pow2_at_least(ceil_div(nvec, 4));
  } else if (!force_block && nvec <= kWarpMaxVecs && op != RowOp::row_sum) {
    p.vecs = 8;
    p.lanes = 32;
  } else {
    const bool eight = op == RowOp::softmax && dtype_size(dtype) == 4 &&
                       nvec <= 8 * resident_max_threads(op, 8);
    p.vecs = eight ? 8 : 4;
    p.lanes = std::max(64, pow2_at_least(ceil_div(nvec, p.vecs)));
  }
  // Warp plan: several rows per 128-thread block. Block plan: exactly one row per block, since
  // its reduction (block_reduce) spans the whole block; max(lanes, 128) once gave the forced
  // block plan 2 rows of 64 lanes in a 128-thread block, and each row got the sum of both.
  p.threads = p.lanes <= 32 ? 128 : p.lanes;
  p.elems_per_thread = p.vecs * v;
  const std::int64_t rows_per_block = p.threads / p.lanes;
  p.blocks = ceil_div(rows, rows_per_block);
  return p;
}

// Looped plan: a block per row, grid-stride over rows. For softmax (two passes over the row)
// the rows in flight are capped so that they fit in half of L2 and the second read hits it;
// fewer resident blocks then get larger chunks (more threads each) to keep bytes in flight.
RowPlan looped(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev,
               RowOp op) {
  const int v = vec_elems(dtype);
  const std::int64_t row_bytes = width * static_cast<std::int64_t>(dtype_size(dtype));
  const bool two_pass = op != RowOp::row_sum;
  std::int64_t per_sm = 16;  // blocks per SM we would like
  if (two_pass) per_sm = std::clamp<std::int64_t>(dev.l2_bytes / 2 / (dev.sms * row_bytes), 1, 16);
  RowPlan p;
  p.kind = RowKind::looped;
  p.vecs = 4;
  p.chunk = per_sm <= 4 ? 8192 : per_sm <= 8 ? 4096 : 2048;
  p.threads = p.chunk / (p.vecs * v);
  p.lanes = p.threads;
  p.elems_per_thread = p.vecs * v;
  const std::int64_t fit = std::min<std::int64_t>(per_sm, dev.max_threads_per_sm / p.threads);
  p.blocks = std::max<std::int64_t>(1, std::min<std::int64_t>(rows, fit * dev.sms));
  // row_sum keeps nothing in L2 between passes, so it takes a block per row and the hardware
  // hands rows to SMs as they free up. A persistent grid (16 blocks per SM, grid-stride)
  // splits rows unevenly: 4096 rows on 2112 blocks put 32 rows on some SMs against 31.0 on
  // average, which matches the ~1% it trailed CUB's block per row at 4096x4096 and 8192x8192
  // float32 (18.98 vs 18.78 us, 64.13 vs 63.55 us).
  if (!two_pass) p.blocks = std::max<std::int64_t>(1, std::min(rows, dev.max_grid_x));
  return p;
}

// Split plan: about four blocks per SM in all, 256 threads each; the row is cut into pieces
// of whole warp-steps (32 lanes x 16 bytes) so every piece starts at the row's own alignment.
// Never more pieces than chunks (one chunk: all of a block's loads in flight once): the time
// of a few small rows is the cost per piece, not the read. At 4x32769 pieces of a warp-step
// (516 blocks, one vector per thread) took 4.29 us against 3.52 us for 36 pieces (row_sum
// float32, graph; softmax 6.83 against 5.09 us; both sizings in one run:
// docs/kernels.md#split-pieces).
RowPlan split(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev) {
  const int v = vec_elems(dtype);
  RowPlan p;
  p.kind = RowKind::split;
  p.threads = 256;
  p.lanes = 256;
  p.vecs = 4;
  p.elems_per_thread = p.vecs * v;
  p.chunk = p.threads * p.elems_per_thread;
  const std::int64_t r = std::max<std::int64_t>(rows, 1);
  const std::int64_t target = 4 * static_cast<std::int64_t>(dev.sms);
  const std::int64_t quantum = 32 * v;
  std::int64_t segs = std::clamp<std::int64_t>(ceil_div(target, r), 1, ceil_div(width, p.chunk));
  p.segment = ceil_div(ceil_div(width, segs), quantum) * quantum;
  p.segments = static_cast<int>(ceil_div(width, p.segment));
  p.blocks = r * p.segments;
  return p;
}

}  // namespace

std::string kind_name(RowKind k) {
  switch (k) {
    case RowKind::resident: return "resident";
    case RowKind::looped: return "looped";
    case RowKind::split: return "split";
  }
  return "?";
}

std::string describe(const RowPlan& p) {
  std::string s = kind_name(p.kind) + " threads=" + std::to_string(p.threads) +
                  " vecs=" + std::to_string(p.vecs);
  if (p.kind == RowKind::resident) s += " lanes=" + std::to_string(p.lanes);
  if (p.kind != RowKind::resident) s += " chunk=" + std::to_string(p.chunk);
  if (p.kind == RowKind::split)
    s += " segments=" + std::to_string(p.segments) + " segment=" + std::to_string(p.segment);
  return s + " blocks=" + std::to_string(p.blocks);
}

std::string resident_plan_problem(const RowPlan& p, RowOp op) {
  const std::string where = " (" + describe(p) + ")";
  if (p.lanes < 1 || p.lanes > 1024 || (p.lanes & (p.lanes - 1)) != 0)
    return "lanes must be a power of two in 1..1024" + where;
  if (p.threads < p.lanes || p.threads > 1024 || p.threads % p.lanes != 0)
    return "threads must be a multiple of lanes, at most 1024" + where;
  if (p.vecs < 1 || p.elems_per_thread % p.vecs != 0 || p.lanes < p.elems_per_thread / p.vecs)
    return "lanes must cover a row's scalar head and tail (one element of a vector each)" + where;
  if (p.lanes > 32 && p.threads != p.lanes)
    return "a row spanning several warps needs a block to itself (threads == lanes)" + where;
  if (p.threads > resident_max_threads(op, p.vecs))
    return "more threads than the kernel's launch bound for this many vectors" + where;
  return {};
}

// The rules below were set from the first H200 sweep (results/sweep, commit 8eda93b, graph
// timer, cold); docs/kernels.md has the figures.
RowPlan row_plan(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev,
                 RowOp op) {
  const std::int64_t nvec = ceil_div(std::max<std::int64_t>(width, 1), vec_elems(dtype));
  // Few wide rows: one block per row would leave SMs idle, so cut rows across blocks. Softmax
  // pays a second kernel for it, which lost to looping at 128x32769 (14.3 vs 16.3 us float32),
  // so it splits only below half the SMs; row_sum's split won there (8.0 vs 12.7 us).
  const std::int64_t split_below = op == RowOp::row_sum ? dev.sms : dev.sms / 2;
  if (rows < split_below && width > 8192) return split(rows, width, dtype, dev);
  // row_sum reads each element once and keeps nothing; the resident block, all its loads in
  // flight at once, beats looping up to 512 threads x 4 vectors. At 16-bit 8192x8192 it was 3%
  // faster than looped (33.1 vs 34.0 us, events). At float32 8192x8192 (a 512-thread block)
  // the general kernel only tied looped (archive/2026-11-30-rowsum-cub-explore), but the
  // aligned kernel's lean form ran 59.5 us against looped's 59.7-60.5 and CUB's 59.8 in two
  // runs (graph; archive/2026-11-30-rowsum-lean-explore). Past it, looped (128 threads, 4
  // vectors a step) needs no wider blocks; wider blocks are unmeasured.
  // (bfloat16 backward once looped here: held in registers it took 99-161 registers per thread
  // and ran 1.2-1.4x slower than looped, because the compiler kept the converted floats live
  // across the dot reduction; keep_packed in the kernel brings it to float16's 64.)
  const std::int64_t resident_max = op == RowOp::row_sum ? kRowSumResidentMaxVecs : resident_max_vecs(op);
  if (nvec <= resident_max) return resident(rows, width, dtype, false, op);
  return looped(rows, width, dtype, dev, op);
}

std::string plan_unsupported(Forced f, std::int64_t rows, std::int64_t width, DType dtype,
                             RowOp op) {
  (void)rows;
  const std::int64_t nvec = ceil_div(std::max<std::int64_t>(width, 1), vec_elems(dtype));
  switch (f) {
    case Forced::resident_warp:
      if (nvec > kWarpMaxVecs)
        return "a warp holds at most " + std::to_string(kWarpMaxVecs * vec_elems(dtype)) +
               " elements of this dtype per row";
      return {};
    case Forced::resident_block:
    case Forced::resident_any:
      if (nvec > resident_max_vecs(op))
        return "a block holds at most " + std::to_string(resident_max_vecs(op) * vec_elems(dtype)) +
               " elements of this dtype per row in registers";
      return {};
    case Forced::looped:
    case Forced::split: return {};
  }
  return {};
}

RowPlan forced_plan(Forced f, std::int64_t rows, std::int64_t width, DType dtype,
                    const DeviceLimits& dev, RowOp op) {
  const std::string why = plan_unsupported(f, rows, width, dtype, op);
  if (!why.empty()) throw std::invalid_argument(why);
  switch (f) {
    case Forced::resident_warp:
    case Forced::resident_any: return resident(rows, width, dtype, false, op);
    case Forced::resident_block: return resident(rows, width, dtype, true, op);
    case Forced::looped: return looped(rows, width, dtype, dev, op);
    case Forced::split: return split(rows, width, dtype, dev);
  }
  throw std::logic_error("unhandled forced plan");
}

}  // namespace kbench::rows
