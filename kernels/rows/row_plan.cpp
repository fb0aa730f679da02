#include "kernels/rows/row_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace kbench::rows {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

int pow2_at_least(std::int64_t v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

int vec_elems(DType t) { return static_cast<int>(16 / dtype_size(t)); }

// The 16-byte vectors a resident plan must give a row (RowRules::edges_as_scalars), at least 1.
std::int64_t resident_vecs(std::int64_t width, DType dtype, const RowRules& rules) {
  const int v = vec_elems(dtype);
  const std::int64_t w = std::max<std::int64_t>(width, 1);
  return std::max<std::int64_t>(1, rules.edges_as_scalars ? w / v : ceil_div(w, v));
}

// A resident plan of `vecs` vectors a thread and `lanes` threads a row. Warp plan: several
// rows per 128-thread block. Block plan: exactly one row per block, since its reduction
// (block_reduce) spans the whole block; max(lanes, 128) once gave the forced block plan 2 rows
// of 64 lanes in a 128-thread block, and each row got the sum of both.
RowPlan resident_shape(std::int64_t rows, DType dtype, int vecs, int lanes) {
  RowPlan p;
  p.kind = RowKind::resident;
  p.vecs = vecs;
  p.lanes = lanes;
  p.threads = p.lanes <= 32 ? 128 : p.lanes;
  p.elems_per_thread = p.vecs * vec_elems(dtype);
  const std::int64_t rows_per_block = p.threads / p.lanes;
  p.blocks = ceil_div(rows, rows_per_block);
  return p;
}

// Resident plan: 64 bytes per thread (4 vectors) is enough in flight when an SM holds 2048
// threads; narrow rows use part of a warp (1 vector per lane up to 32 vectors, then 4, then 8
// vectors per lane for a whole warp where the op's rules allow), wider rows a block of
// 64..1024 threads (8 vectors a thread for float32 where the rules allow).
RowPlan resident(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev, bool force_block,
                 const RowRules& rules) {
  const int v = vec_elems(dtype);
  const std::int64_t nvec = resident_vecs(width, dtype, rules);
  // Few rows: past 32 vectors, a block (RowRules::warp_min_rows_per_sm).
  const bool few_rows = rows < static_cast<std::int64_t>(rules.warp_min_rows_per_sm) * dev.sms;
  RowPlan p;
  if (!force_block && nvec <= std::min<std::int64_t>(32, rules.one_vector_max_vecs)) {
    p.vecs = 1;
    // At least one lane per element of a vector: a row's scalar head and tail (each under 16
    // bytes, up to 3 or 7 elements) are read one element per lane, so 1 or 2 lanes on a
    // misaligned tiny row (3x7, row 1 starting 14 bytes in) dropped elements.
    p.lanes = std::max(pow2_at_least(nvec), v);
  } else if (!force_block && (nvec <= 32 || (!few_rows && nvec <= std::min<std::int64_t>(128, rules.warp_max_vecs)))) {
    // Rows of up to 32 vectors stay in a warp whatever the row count (one_vector_max_vecs),
    // each lane's 4 vectors one element a lane wide at least (the scalar head and tail).
    p.vecs = 4;
    p.lanes = std::max(pow2_at_least(ceil_div(nvec, 4)), v);
  } else if (!force_block && !few_rows && nvec <= std::min<std::int64_t>(kWarpMaxVecs, rules.warp_max_vecs) &&
             rules.warp_eight_vectors) {
    p.vecs = 8;
    p.lanes = 32;
  } else {
    const bool eight = rules.block_eight_vectors_f32 && dtype_size(dtype) == 4 && nvec > rules.eight_vectors_above &&
                       nvec <= 8 * rules.max_threads(8);
    p.vecs = eight ? 8 : 4;
    p.lanes = std::max(64, pow2_at_least(ceil_div(nvec, p.vecs)));
  }
  return resident_shape(rows, dtype, p.vecs, p.lanes);
}

// Looped plan: a block per row, grid-stride over rows. For a two-pass op the rows in flight
// are capped so that they fit in half of L2 and the second read hits it; fewer resident blocks
// then get larger chunks (more threads each) to keep bytes in flight.
std::int64_t looped_per_sm(std::int64_t width, DType dtype, const DeviceLimits& dev, const RowRules& rules) {
  const std::int64_t row_bytes = width * static_cast<std::int64_t>(dtype_size(dtype));
  if (!rules.two_pass) return 16;  // blocks per SM we would like
  return std::clamp<std::int64_t>(dev.l2_bytes / 2 / (dev.sms * row_bytes), 1, 16);
}

RowPlan looped_with_chunk(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev,
                          const RowRules& rules, int chunk) {
  const int v = vec_elems(dtype);
  const std::int64_t per_sm = looped_per_sm(width, dtype, dev, rules);
  RowPlan p;
  p.kind = RowKind::looped;
  p.vecs = 4;
  p.chunk = chunk;
  p.threads = p.chunk / (p.vecs * v);
  p.lanes = p.threads;
  p.elems_per_thread = p.vecs * v;
  const std::int64_t fit = std::min<std::int64_t>(per_sm, dev.max_threads_per_sm / p.threads);
  p.blocks = std::max<std::int64_t>(1, std::min<std::int64_t>(rows, fit * dev.sms));
  // A one-pass op keeps nothing in L2 between passes, so it takes a block per row and the
  // hardware hands rows to SMs as they free up. A persistent grid (16 blocks per SM,
  // grid-stride) splits rows unevenly: 4096 rows on 2112 blocks put 32 rows on some SMs against
  // 31.0 on average, which matches the ~1% row_sum trailed CUB's block per row at 4096x4096
  // and 8192x8192 float32 (18.98 vs 18.78 us, 64.13 vs 63.55 us).
  if (!rules.two_pass) p.blocks = std::max<std::int64_t>(1, std::min(rows, dev.max_grid_x));
  return p;
}

RowPlan looped(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev,
               const RowRules& rules) {
  std::int64_t in_flight = looped_per_sm(width, dtype, dev, rules);
  if (rules.chunk_counts_rows) in_flight = std::min<std::int64_t>(in_flight, std::max<std::int64_t>(1, ceil_div(rows, dev.sms)));
  const int chunk = in_flight <= rules.chunk_8192_per_sm ? 8192 : in_flight <= rules.chunk_4096_per_sm ? 4096 : 2048;
  return looped_with_chunk(rows, width, dtype, dev, rules, chunk);
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
  return s + " blocks=" + std::to_string(p.blocks) + (p.serial ? " serial" : "");
}

std::string plan_name(const RowPlan& p) {
  const std::string t = ".t" + std::to_string(p.threads) + (p.serial ? ".serial" : "");
  switch (p.kind) {
    case RowKind::resident: return "resident.v" + std::to_string(p.vecs) + ".l" + std::to_string(p.lanes) + t;
    case RowKind::looped: return "looped.c" + std::to_string(p.chunk) + t;
    case RowKind::split: return "split.s" + std::to_string(p.segments) + t;
  }
  return "?";
}

std::string grid_plan_name(const RowPlan& p, const RowRules& rules) {
  if (p.kind == RowKind::looped && !rules.looped_chunk_sets_threads) return "looped.tiles";
  return plan_name(p);
}

std::vector<RowPlan> grid_plans(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev,
                                const RowRules& rules) {
  const int v = vec_elems(dtype);
  const std::int64_t nvec = resident_vecs(width, dtype, rules);
  std::vector<RowPlan> out;
  const auto add = [&](const RowPlan& p) {
    for (const RowPlan& q : out)
      if (grid_plan_name(q, rules) == grid_plan_name(p, rules)) return;
    out.push_back(p);
  };
  // Resident: the narrowest lanes (at least one per element of a vector) for each vector count.
  if (nvec <= rules.resident_capacity_vecs(dtype_size(dtype)))
    for (const int k : {1, 4, 8}) {
      const int narrowest = std::max(pow2_at_least(ceil_div(nvec, k)), v);
      const bool eight_block = rules.block_eight_vectors_f32 && dtype_size(dtype) == 4;
      std::vector<RowPlan> shapes;
      if (narrowest <= 32 && (k != 8 || rules.warp_eight_vectors)) shapes.push_back(resident_shape(rows, dtype, k, narrowest));
      // A block where a warp would do, too: the searched warp_max_vecs (32 and up) sends rows of
      // more than 32 vectors to a block. Never a block of one vector a thread (row_plan has none).
      if (k != 1 && (k != 8 || eight_block) && (narrowest > 32 || nvec > 32))
        shapes.push_back(resident_shape(rows, dtype, k, std::max(64, narrowest)));
      for (const RowPlan& p : shapes)
        if (resident_plan_problem(p, rules).empty()) add(p);
    }
  if (ceil_div(width, v) > 256) {
    if (rules.looped_chunk_sets_threads)
      for (const int chunk : kLoopedChunks) add(looped_with_chunk(rows, width, dtype, dev, rules, chunk));
    else
      add(looped(rows, width, dtype, dev, rules));  // grid_plan_name: one plan, whatever its chunk
  }
  if (rows < dev.sms && width > 8192) add(split(rows, width, dtype, dev));
  return out;
}

std::string resident_plan_problem(const RowPlan& p, const RowRules& rules) {
  const std::string where = " (" + describe(p) + ")";
  if (p.lanes < 1 || p.lanes > 1024 || (p.lanes & (p.lanes - 1)) != 0)
    return "lanes must be a power of two in 1..1024" + where;
  if (p.threads < p.lanes || p.threads > 1024 || p.threads % p.lanes != 0)
    return "threads must be a multiple of lanes, at most 1024" + where;
  if (p.vecs < 1 || p.elems_per_thread % p.vecs != 0 || p.lanes < p.elems_per_thread / p.vecs)
    return "lanes must cover a row's scalar head and tail (one element of a vector each)" + where;
  if (p.lanes > 32 && p.threads != p.lanes)
    return "a row spanning several warps needs a block to itself (threads == lanes)" + where;
  if (p.threads > rules.max_threads(p.vecs))
    return "more threads than the kernel's launch bound for this many vectors" + where;
  return {};
}

// The thresholds were set from the first H200 sweep (graph timer, cold); docs/kernels.md has
// the figures, and each op's rules say why its values differ.
RowPlan row_plan(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev,
                 const RowRules& rules) {
  const std::int64_t nvec = resident_vecs(width, dtype, rules);
  // Few wide rows: one block per row would leave SMs idle, so cut rows across blocks.
  const std::int64_t split_below = dev.sms / rules.split_below_divisor;
  if ((rows < split_below && width > std::max<std::int64_t>(rules.split_above_width, 8192)) ||
      (rows < dev.sms && width > std::max<std::int64_t>(rules.split_all_sms_above_width, 8192)))
    return split(rows, width, dtype, dev);
  const std::int64_t capacity = rules.resident_capacity_vecs(dtype_size(dtype));
  if (rows <= static_cast<std::int64_t>(rules.wide_resident_rows_per_sm) * dev.sms && nvec <= capacity)
    return resident(rows, width, dtype, dev, false, rules);
  if (nvec <= std::min(rules.auto_resident_vecs, capacity))
    return resident(rows, width, dtype, dev, false, rules);
  return looped(rows, width, dtype, dev, rules);
}

std::string plan_unsupported(Forced f, std::int64_t width, DType dtype, const RowRules& rules) {
  const std::int64_t nvec = resident_vecs(width, dtype, rules);
  switch (f) {
    case Forced::resident_warp:
      if (nvec > kWarpMaxVecs)
        return "a warp holds at most " + std::to_string(kWarpMaxVecs) + " 16-byte vectors (" +
               std::to_string(kWarpMaxVecs * vec_elems(dtype)) + " elements of this dtype) per row";
      return {};
    case Forced::resident_block:
    case Forced::resident_any:
      if (nvec > rules.resident_capacity_vecs(dtype_size(dtype)))
        return "a block holds at most " + std::to_string(rules.resident_capacity_vecs(dtype_size(dtype))) +
               " 16-byte vectors (" + std::to_string(rules.resident_capacity_vecs(dtype_size(dtype)) * vec_elems(dtype)) +
               " elements of this dtype) per row in registers";
      return {};
    case Forced::looped:
    case Forced::split: return {};
  }
  return {};
}

RowPlan forced_plan(Forced f, std::int64_t rows, std::int64_t width, DType dtype,
                    const DeviceLimits& dev, const RowRules& rules) {
  const std::string why = plan_unsupported(f, width, dtype, rules);
  if (!why.empty()) throw std::invalid_argument(why);
  switch (f) {
    case Forced::resident_warp:
    case Forced::resident_any: return resident(rows, width, dtype, dev, false, rules);
    case Forced::resident_block: return resident(rows, width, dtype, dev, true, rules);
    case Forced::looped: return looped(rows, width, dtype, dev, rules);
    case Forced::split: return split(rows, width, dtype, dev);
  }
  throw std::logic_error("unhandled forced plan");
}

std::size_t split_workspace_bytes(const RowPlan& plan, std::int64_t rows, const RowRules& rules) {
  if (plan.kind != RowKind::split) return 0;
  const auto r = static_cast<std::size_t>(rows);
  return r * static_cast<std::size_t>(plan.segments) * rules.split_piece_bytes + r * rules.split_row_bytes;
}

}  // namespace kbench::rows
