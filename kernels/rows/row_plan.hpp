// Row plans: which kernel computes a [rows, width] row operator, with its parameters.
//
// A plain host function, no CUDA: the CPU tests pin it on a table of shapes, and every
// launcher (the `auto` variants and each plan run by name) gets its parameters here.
//
//   resident  the row held in registers: `lanes` threads per row, each holding `vecs` 16-byte
//             vectors. lanes <= 32 is the warp plan (a warp or part of a warp per row, several
//             rows per 128-thread block, shuffles only); lanes >= 64 is the block plan (one
//             block of threads == lanes per row, one shared-memory step over the whole
//             block). One read of x.
//   looped    one block per row walks the row in chunks of `chunk` elements (2048, 4096 or
//             8192), with an online per-lane max and sum; a two-pass op re-reads each row for
//             the output, so the grid is capped at the rows that fit in half of L2.
//   split     few rows: each row is cut into `segments` pieces of `segment` elements; one
//             kernel writes per-segment statistics, the next (or the row's last block) merges.
//
// What differs between ops is data, not code: each op sets a RowRules beside its kernels (its
// launch bounds, how far its resident plan reaches, whether it re-reads rows, where it splits),
// and the functions here read only that. A new row op adds its rules, never a branch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "device/device_limits.hpp"

namespace kbench::rows {

// Widths above this are rejected by every launcher (a clear error, never a wrong answer).
inline constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;

// The warp plan's capacity: 32 lanes x 8 vectors.
inline constexpr int kWarpMaxVecs = 256;
// Threads of a warp-plan block (several rows of <= 32 lanes each) and the most an SM holds.
inline constexpr int kWarpPlanThreads = 128;
inline constexpr int kMaxThreadsPerSm = 2048;

// One row op's plan parameters (constexpr, so that its kernels' launch bounds read them too).
// The defaults are a two-pass op that holds one tensor (softmax's shape of work); an op sets
// only what differs, with a comment on why.
struct RowRules {
  // Launch bounds of the resident kernels holding 4 and 8 vectors per thread (1-vector kernels
  // are warp plans of 128 threads). A plan never launches more; a resident row holds at most
  // 4 x max_threads_4 vectors.
  int max_threads_4 = 1024;
  int max_threads_8 = kWarpPlanThreads;
  // float32 kernels of up to 4 vectors must fit a full SM (2048 threads): a second launch
  // bound, which caps their registers at 32.
  bool fill_sm_f32 = false;
  // Widest row, in 16-byte vectors, that the automatic plan keeps resident; wider rows loop.
  std::int64_t auto_resident_vecs = 4096;
  // Up to this many rows per SM (0: never), rows that do not split stay resident up to the
  // block's capacity (resident_capacity_vecs), past auto_resident_vecs: one wave of 1024-thread
  // blocks holds every row, each row's bytes all in flight at once, where a looped block walks
  // its row in dependent chunks (row_sum bfloat16 1x32768: resident 1.98 us, looped 2.86; at 198
  // rows, a second wave, looped wins again: archive/grid/grid-20261202T020831Z-cf6259.json.gz).
  // The split goes first: softmax's fewest rows split faster than they stay resident, and its
  // grids (results/grid/grid-20261202T040740Z-f5aa97.json, -040824Z-14aa6b) fitted with the
  // wide rows ahead of the split kept 9 cells more than 10% off, against 3 behind it.
  int wide_resident_rows_per_sm = 0;
  // Rows of up to this many vectors hold one vector a lane (up to 32 lanes); wider ones 4.
  // Fewer lanes of 4 vectors each reduce over fewer shuffles, which pays where the kernel does
  // little else (row_sum bfloat16 1056x256: 1.20 us in 8 lanes of 4, 1.44 in 32 lanes of 1, same
  // grid) and loses where it does more (softmax, rmsnorm: 8-70% slower in 4 vectors a lane).
  std::int64_t one_vector_max_vecs = 32;
  // The warp plan goes to 8 vectors a lane (up to kWarpMaxVecs) before the block plan.
  bool warp_eight_vectors = true;
  // Rows of more vectors than this take the block plan (64 threads and up), not a warp.
  std::int64_t warp_max_vecs = kWarpMaxVecs;
  // Below this many rows per SM (0: never), rows of more than 32 vectors take the block plan
  // too: with few rows in flight a row's latency is the time, and a 64-thread block issues a
  // quarter of a 16-lane warp's loads per thread (rmsnorm bfloat16 132x513: 2.26 us in the
  // block, 2.99 in the warp), while with many rows the warp's leaner reduction wins (16384x384:
  // 9.25 us in the warp, 13.92 in the block; both in the grids of kbench fit's notes).
  int warp_min_rows_per_sm = 0;
  // float32 block plans hold 8 vectors a thread, up to 8 x max_threads_8 vectors, for rows of
  // more than eight_vectors_above vectors (below it, a block of 64 threads x 8 would leave
  // vectors of its threads empty).
  bool block_eight_vectors_f32 = false;
  std::int64_t eight_vectors_above = 0;
  // Looped plans read each row twice: the rows in flight are capped to fit half of L2.
  bool two_pass = true;
  // Rows below sms / split_below_divisor, of widths past split_above_width (8192 or more: the
  // grid times split plans from there), are split across blocks.
  int split_below_divisor = 2;
  std::int64_t split_above_width = 8192;
  // Rows below the SM count itself split past this width (kMaxWidth: never): rows wide enough
  // pay the split's second kernel back even where one block per row would fill most SMs.
  std::int64_t split_all_sms_above_width = kMaxWidth;
  // The looped chunk follows the blocks an SM can keep in flight (per_sm: 16, or for a two-pass
  // op the rows that fit half of L2, fewer for wider rows; with chunk_counts_rows also at most
  // the rows per SM): 8192 up to chunk_8192_per_sm, 4096 up to chunk_4096_per_sm, else 2048.
  // Fewer blocks need larger chunks (more threads each) to keep bytes in flight.
  int chunk_8192_per_sm = 4;
  int chunk_4096_per_sm = 8;
  bool chunk_counts_rows = false;
  // The looped kernels run a block of chunk / (4 vectors) threads, so the chunk is theirs to
  // vary; false where the looped plan's kernels keep a fixed shape (rmsnorm_backward's tiles).
  bool looped_chunk_sets_threads = true;
  // The op's resident kernels read a misaligned row as a scalar head (up to its first 16-byte
  // boundary), whole vectors and a scalar tail, one element a lane (row_parts): a row then holds
  // at most width / V whole vectors, and its plan needs that many slots, not ceil(width / V). At
  // width 8193 in 16 bits that is 1024 vectors in 256 lanes of 4, where 1025 took 512 lanes,
  // half empty, and lost to looping by up to 2x at many rows (row_sum bfloat16 2112x8193:
  // resident 11.95 us, looped 5.96, archive/grid/grid-20261201T180709Z-8bc63c.json.gz), while the
  // full 256 lanes at 8192 beat looping at every row count. false where a kernel gives each
  // thread the same columns in every row (rmsnorm_backward), so a row takes ceil(width / V).
  bool edges_as_scalars = true;
  // The split plan's workspace: bytes per row piece (its statistics) and per row (counters).
  std::size_t split_piece_bytes = sizeof(float);
  std::size_t split_row_bytes = 0;

  constexpr int max_threads(int vecs) const {
    return vecs == 4 ? max_threads_4 : vecs == 8 ? max_threads_8 : kWarpPlanThreads;
  }
  constexpr int min_blocks(int vecs, int elem_bytes) const {
    return fill_sm_f32 && vecs <= 4 && elem_bytes == 4 ? kMaxThreadsPerSm / max_threads(vecs) : 0;
  }
  // The widest row a resident plan can hold, in 16-byte vectors of `elem_bytes`-byte elements:
  // 4 vectors a thread up to max_threads_4, or 8 up to max_threads_8 for float32 block plans
  // where the op allows them.
  constexpr std::int64_t resident_capacity_vecs(std::size_t elem_bytes) const {
    const std::int64_t four = 4 * std::int64_t{max_threads_4};
    const std::int64_t eight = block_eight_vectors_f32 && elem_bytes == 4 ? 8 * std::int64_t{max_threads_8} : 0;
    return four > eight ? four : eight;
  }
};

enum class RowKind { resident, looped, split };

struct RowPlan {
  RowKind kind = RowKind::resident;
  int threads = 128;         // threads per block
  int lanes = 32;            // resident: threads per row (1..1024, a power of two); > 32: == threads
  int vecs = 4;              // 16-byte vectors per thread per step
  int elems_per_thread = 0;  // vecs * (16 / element size)
  int chunk = 0;             // looped, split: elements one block covers per step
  int segments = 1;          // split: pieces per row
  std::int64_t segment = 0;  // split: elements per piece (a multiple of 16 bytes' worth)
  std::int64_t blocks = 0;   // grid size of the (first) kernel
  // A two-kernel plan's second kernel launched after the first ends, not overlapping it (the
  // *_serial controls, which show in the same visits what the overlap gains); set by a variant,
  // never by row_plan. Plans of one kernel ignore it.
  bool serial = false;
  bool operator==(const RowPlan&) const = default;
};

std::string describe(const RowPlan& p);  // "resident lanes=32 vecs=8 threads=128 blocks=128"
std::string kind_name(RowKind k);

// The automatic choice (the `auto` variants follow it).
RowPlan row_plan(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev,
                 const RowRules& rules);

// Parameters of one plan forced by name. resident_warp / resident_block pin the resident plan
// to lanes <= 32 / lanes >= 64. plan_unsupported returns an empty string when the plan can run
// the shape, else why not (the named variants' unsupported()).
enum class Forced { resident_warp, resident_block, resident_any, looped, split };
std::string plan_unsupported(Forced f, std::int64_t width, DType dtype, const RowRules& rules);
RowPlan forced_plan(Forced f, std::int64_t rows, std::int64_t width, DType dtype,
                    const DeviceLimits& dev, const RowRules& rules);

// What the resident kernels assume of a plan, as a string (empty when it holds): lanes a power
// of two in 1..1024, at least the elements of one vector (the scalar head and tail of a row
// are read one element per lane), threads a multiple of lanes up to 1024, and lanes > 32 only with
// threads == lanes (the block reduction spans the whole block, so one row per block), and no
// more threads than the kernel's launch bound. The launchers refuse a plan that breaks it; the
// CPU tests check every plan against it.
std::string resident_plan_problem(const RowPlan& p, const RowRules& rules);

// A plan's name, unique among the plans of a shape, spelling every parameter that changes what
// runs (the grid's variant names): "resident.v4.l64.t64", "looped.c4096.t256", "split.s9.t256".
std::string plan_name(const RowPlan& p);

// plan_name, except that a looped plan of an op whose looped kernels keep a fixed shape
// (looped_chunk_sets_threads false) is "looped.tiles" whatever its chunk: the same kernels run.
std::string grid_plan_name(const RowPlan& p, const RowRules& rules);

// The looped chunks a grid times (row_plan chooses among them).
inline constexpr int kLoopedChunks[] = {2048, 4096, 8192};
// The plans the grid times at one shape: every plan row_plan could choose there under any of
// the thresholds `kbench fit` searches (RowRules' auto_resident_vecs down to 256 vectors,
// split_below_divisor down to 1, the chunk rule, warp_max_vecs, eight_vectors_above,
// wide_resident_rows_per_sm, one_vector_max_vecs), within
// what the op's kernels run (its launch bounds, resident_plan_problem, its vector counts):
//   resident  the narrowest lanes for 1, 4 (warp or block) and 8 vectors a thread (warp where
//             warp_eight_vectors, block for float32 where block_eight_vectors_f32);
//   looped    each of kLoopedChunks past 256 vectors (one, row_plan's, where the kernels' shape
//             is fixed);
//   split     below one row per SM, widths past 8192.
// row_plan's choice under the op's rules is always among them (a CPU test holds that).
std::vector<RowPlan> grid_plans(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev,
                                const RowRules& rules);

// Bytes of workspace the plan needs for `rows` rows (only the split plan has any).
std::size_t split_workspace_bytes(const RowPlan& plan, std::int64_t rows, const RowRules& rules);

}  // namespace kbench::rows
