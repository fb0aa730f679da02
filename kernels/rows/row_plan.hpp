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
//             8192), with an online per-lane max and sum; softmax re-reads each row for the
//             output, so the grid is capped at the rows that fit in half of L2.
//   split     fewer rows than SMs: each row is cut into `segments` pieces of `segment`
//             elements; one kernel writes per-segment statistics, the next merges them.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.hpp"
#include "device/device_limits.hpp"

namespace kbench::rows {


// Widths above this are rejected by every launcher (a clear error, never a wrong answer).
inline constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;

enum class RowOp { row_sum, softmax, softmax_backward };
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
};

std::string describe(const RowPlan& p);  // "resident lanes=32 vecs=8 threads=128 blocks=128"
std::string kind_name(RowKind k);

// The automatic choice (the `auto` variants follow it).
RowPlan row_plan(std::int64_t rows, std::int64_t width, DType dtype, const DeviceLimits& dev,
                 RowOp op = RowOp::softmax);

// Parameters of one plan forced by name. resident_warp / resident_block pin the resident plan
// to lanes <= 32 / lanes >= 64. Each returns an empty string when it can run the shape, else
// why not (the named variants' unsupported()).
enum class Forced { resident_warp, resident_block, resident_any, looped, split };
std::string plan_unsupported(Forced f, std::int64_t rows, std::int64_t width, DType dtype,
                             RowOp op = RowOp::softmax);
RowPlan forced_plan(Forced f, std::int64_t rows, std::int64_t width, DType dtype,
                    const DeviceLimits& dev, RowOp op = RowOp::softmax);

// What the resident kernels assume of a plan, as a string (empty when it holds): lanes a power
// of two in 1..1024, at least the elements of one vector (the scalar head and tail of a row
// are read one element per lane), threads a multiple of lanes up to 1024, and lanes > 32 only with
// threads == lanes (the block reduction spans the whole block, so one row per block). The
// launchers refuse a plan that breaks it; the CPU tests check every plan against it.
std::string resident_plan_problem(const RowPlan& p, RowOp op);

// Resident plan capacity in 16-byte vectors per row: 1024 threads x 4 vectors; backward holds
// y and dy, so 512 threads x 4 vectors (128 registers each; 1024 threads would cap them at 64
// and spill).
inline constexpr int kResidentMaxVecs = 4096;
inline constexpr int kResidentMaxThreadsBackward = 512;
inline constexpr int resident_max_vecs(RowOp op) {
  return op == RowOp::softmax_backward ? 4 * kResidentMaxThreadsBackward : kResidentMaxVecs;
}
// The warp plan's capacity: 32 lanes x 8 vectors.
inline constexpr int kWarpMaxVecs = 256;
// The launch bound of each resident kernel holding `vecs` vectors per thread (its
// __launch_bounds__; a plan must not launch more threads). 4 vectors: 1024 threads in 64
// registers (backward, holding two tensors: 512). 8 vectors: 128 threads, except float32
// softmax's block plan: 256. The bound steers register allocation: under 256, row_sum's
// 8-vector kernel got 48 registers instead of 62 and ran 1.2x slower (16384x1024 float32, an
// unsaved run), so only softmax takes it.
inline constexpr int resident_max_threads(RowOp op, int vecs) {
  if (vecs == 4) return op == RowOp::softmax_backward ? kResidentMaxThreadsBackward : 1024;
  if (vecs == 8 && op == RowOp::softmax) return 256;
  return 128;
}
// The second launch bound (0: none): blocks of resident_max_threads an SM must hold at once,
// which caps registers at 65536 / (blocks x threads). row_sum keeps only its loads and a sum,
// so the float32 kernels fit a full SM (2048 threads at 32 registers; 29 with its 4 loads in
// flight). Unbounded, ptxas gave the 4-vector kernel 44, and ncu showed its 512-thread block
// plan at 8192x8192 at 50% occupancy. The 16-bit kernels spill at 32 (they take 42), and softmax
// and backward hold a row's values, so they keep no second bound.
inline constexpr int resident_min_blocks(RowOp op, int vecs, int elem_bytes) {
  return op == RowOp::row_sum && vecs <= 4 && elem_bytes == 4 ? 2048 / resident_max_threads(op, vecs) : 0;
}

}  // namespace kbench::rows
