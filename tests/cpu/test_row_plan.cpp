// row_plan pinned on a table of shapes (H200 limits), every resident plan one the kernels can
// run, the row contracts on metadata-only views, the softmax oracle on masked rows, the row_sum
// tolerance shown able to fail on a drifting float32 sum, and the serial controls refusing what
// their plans refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_plan.hpp"

namespace kbench::rows {
namespace {

const DeviceLimits kH200 = kH200Limits;  // src/device/device_limits.hpp
const char* const kRowOps[] = {"row_sum", "softmax", "softmax_backward"};

struct Row {
  const RowRules* op;
  std::int64_t rows, width;
  DType dtype;
  RowKind kind;
  int threads, lanes, vecs, chunk, segments;
  std::int64_t segment, blocks;
};

TEST(RowPlan, PinnedTable) {
  using K = RowKind;
  const RowRules *S = &row_rules("softmax"), *R = &row_rules("row_sum"), *B = &row_rules("softmax_backward"),
                 *N = &row_rules("rmsnorm");
  const DType f32 = DType::f32, f16 = DType::f16, bf16 = DType::bf16;
  const std::vector<Row> table = {
      // op rows width dtype kind threads lanes vecs chunk segments segment blocks
      {S, 1, 1, f32, K::resident, 128, 4, 1, 0, 1, 0, 1},
      {R, 3, 7, f16, K::resident, 128, 8, 1, 0, 1, 0, 1},
      // softmax rows of more than 128 vectors take a block (kernels/rows/softmax.cu).
      {S, 199, 760, f32, K::resident, 64, 64, 8, 0, 1, 0, 199},
      {S, 16384, 1024, f32, K::resident, 64, 64, 8, 0, 1, 0, 16384},
      {S, 16384, 1024, bf16, K::resident, 128, 32, 4, 0, 1, 0, 4096},
      // float32 softmax blocks hold 8 vectors per thread up to 2048 vectors (256 threads).
      {S, 4096, 4096, f32, K::resident, 128, 128, 8, 0, 1, 0, 4096},
      {S, 4096, 4096, bf16, K::resident, 128, 128, 4, 0, 1, 0, 4096},
      {S, 8192, 8192, f32, K::resident, 256, 256, 8, 0, 1, 0, 8192},
      {S, 100, 1100, f32, K::resident, 64, 64, 8, 0, 1, 0, 100},
      {B, 8192, 8192, f32, K::resident, 512, 512, 4, 0, 1, 0, 8192},
      {S, 8192, 8192, f16, K::resident, 256, 256, 4, 0, 1, 0, 8192},
      // softmax rows of more than 2048 vectors loop (kbench fit's threshold, kernels/rows/softmax.cu).
      {S, 8192, 16384, f32, K::looped, 512, 512, 4, 8192, 1, 0, 396},
      {B, 8192, 16384, f32, K::looped, 512, 512, 4, 8192, 1, 0, 396},
      {S, 1024, 65536, f32, K::looped, 512, 512, 4, 8192, 1, 0, 132},
      // row_sum's chunk follows its rows per SM too: 1024 rows are under 8 an SM, chunk 8192.
      {R, 1024, 65536, f32, K::looped, 512, 512, 4, 8192, 1, 0, 1024},
      {S, 64, 131072, f32, K::split, 256, 256, 4, 4096, 9, 14592, 576},
      {S, 4, 32769, f32, K::split, 256, 256, 4, 4096, 9, 3712, 36},  // no more pieces than chunks
      // 128 rows: softmax and row_sum do not split (only below half the SMs at this width); up
      // to one row per SM a bfloat16 row of 4096 vectors stays resident (wide_resident_rows_per_sm),
      // a float32 one (8192 vectors) loops.
      {S, 128, 32769, bf16, K::resident, 1024, 1024, 4, 0, 1, 0, 128},
      {S, 133, 32769, bf16, K::looped, 256, 256, 4, 8192, 1, 0, 133},
      {R, 128, 32769, f32, K::looped, 512, 512, 4, 8192, 1, 0, 128},
      {R, 4, 32768, bf16, K::resident, 1024, 1024, 4, 0, 1, 0, 4},
      // row_sum lanes take 4 vectors from 9 vectors on (one_vector_max_vecs): 32 in 8 lanes.
      {R, 1056, 256, bf16, K::resident, 128, 8, 4, 0, 1, 0, 66},
      {R, 1056, 64, bf16, K::resident, 128, 8, 1, 0, 1, 0, 66},
      // softmax splits rows below half the SMs only past 16384 elements, below all of them past
      // 65536.
      {S, 8, 12288, bf16, K::resident, 512, 512, 4, 0, 1, 0, 8},
      {S, 99, 131072, bf16, K::split, 256, 256, 4, 8192, 6, 22016, 594},
      // row_sum holds up to 2048 vectors (512 threads x 4) and loops past them.
      {R, 4096, 4096, f32, K::resident, 256, 256, 4, 0, 1, 0, 4096},
      {R, 4096, 4096, f16, K::resident, 128, 128, 4, 0, 1, 0, 4096},
      {R, 8192, 8192, bf16, K::resident, 256, 256, 4, 0, 1, 0, 8192},
      {R, 8192, 8192, f32, K::resident, 512, 512, 4, 0, 1, 0, 8192},
      // A misaligned row's head and tail are scalars: 8193 elements are 2048 whole vectors at
      // most (RowRules::edges_as_scalars), so 512 threads of 4 hold the row, as at 8192; 16-bit,
      // 1024 vectors in 256 threads, not 512 threads half empty.
      {R, 8192, 8193, f32, K::resident, 512, 512, 4, 0, 1, 0, 8192},
      {R, 2112, 8193, bf16, K::resident, 256, 256, 4, 0, 1, 0, 2112},
      {N, 4096, 8193, f32, K::resident, 512, 512, 4, 0, 1, 0, 4096},
      // rmsnorm_backward gives a thread the same columns in every row: 4097 float32 elements take
      // 1025 vectors (8 a thread past 1024, so 256 threads).
      {&row_rules("rmsnorm_backward"), 4096, 4097, f32, K::resident, 256, 256, 8, 0, 1, 0, 4096},
      // rmsnorm_backward rows of more than 32 vectors take a block below 8 rows per SM.
      {&row_rules("rmsnorm_backward"), 33, 1024, bf16, K::resident, 64, 64, 4, 0, 1, 0, 33},
      {&row_rules("rmsnorm_backward"), 1056, 1024, bf16, K::resident, 128, 32, 4, 0, 1, 0, 264},
      // row_sum has no 8-vector warp plan: 129-256 vectors take a 64-thread block.
      {R, 16384, 1024, f32, K::resident, 64, 64, 4, 0, 1, 0, 16384},
      {R, 16384, 1024, bf16, K::resident, 128, 32, 4, 0, 1, 0, 4096},
      // bfloat16 backward is resident, as float16 (it looped while the kernel took 99 registers).
      {B, 4096, 4096, bf16, K::resident, 128, 128, 4, 0, 1, 0, 4096},
      {R, 3, 1 << 20, f32, K::split, 256, 256, 4, 4096, 175, 6016, 525},
      // rmsnorm rows of more than 64 vectors take a block (it was 4-7% faster at 16384x1024).
      {N, 16384, 1024, f32, K::resident, 64, 64, 4, 0, 1, 0, 16384},
      {N, 16384, 1024, bf16, K::resident, 64, 64, 4, 0, 1, 0, 16384},
      {N, 16384, 512, bf16, K::resident, 128, 16, 4, 0, 1, 0, 2048},
      // Below 16 rows per SM, rmsnorm rows of more than 32 vectors take a block
      // (warp_min_rows_per_sm); from 2112 rows the warp again. softmax_backward (and softmax,
      // rmsnorm_backward) below 8: from 1056 rows the warp.
      {N, 132, 513, bf16, K::resident, 64, 64, 4, 0, 1, 0, 132},
      {N, 2111, 384, bf16, K::resident, 64, 64, 4, 0, 1, 0, 2111},
      {N, 2112, 384, bf16, K::resident, 128, 16, 4, 0, 1, 0, 264},
      {B, 128, 2048, bf16, K::resident, 64, 64, 4, 0, 1, 0, 128},
      {B, 1055, 1024, bf16, K::resident, 64, 64, 4, 0, 1, 0, 1055},
      {B, 1056, 1024, bf16, K::resident, 128, 32, 4, 0, 1, 0, 264},
      {S, 1056, 1024, bf16, K::resident, 128, 32, 4, 0, 1, 0, 264},
      {B, 4096, 1024, bf16, K::resident, 128, 32, 4, 0, 1, 0, 1024},
      {B, 4096, 2048, bf16, K::resident, 64, 64, 4, 0, 1, 0, 4096},  // past 128 vectors, a block
      // softmax_backward too, and every row count below the SMs splits past 16384 elements.
      {B, 99, 32769, bf16, K::split, 256, 256, 4, 8192, 5, 6656, 495},
  };
  for (const auto& t : table) {
    const RowPlan p = row_plan(t.rows, t.width, t.dtype, kH200, *t.op);
    const std::string where = std::to_string(t.rows) + "x" + std::to_string(t.width) + " " +
                              std::string(dtype_name(t.dtype)) + ": " + describe(p);
    EXPECT_EQ(p.kind, t.kind) << where;
    EXPECT_EQ(p.threads, t.threads) << where;
    EXPECT_EQ(p.vecs, t.vecs) << where;
    EXPECT_EQ(p.blocks, t.blocks) << where;
    if (p.kind == K::resident) {
      EXPECT_EQ(p.lanes, t.lanes) << where;
    } else {
      EXPECT_EQ(p.chunk, t.chunk) << where;
    }
    if (p.kind == K::split) {
      EXPECT_EQ(p.segments, t.segments) << where;
      EXPECT_EQ(p.segment, t.segment) << where;
      // Pieces cover the row exactly once.
      EXPECT_GE(p.segment * p.segments, t.width) << where;
      EXPECT_LT(p.segment * (p.segments - 1), t.width) << where;
    }
  }
}

// The elements of a row that a resident plan's vector slots must hold: every whole vector of
// it, where the op reads a misaligned row's head and tail as scalars (lanes >= v of them), else
// the whole row in vector-shaped groups.
std::int64_t vector_elems(std::int64_t width, int v, const RowRules& rules) {
  return rules.edges_as_scalars ? std::max<std::int64_t>(width / v, 1) * v : width;
}

// Two thresholds kbench fit searches: rows up to a wave of the SMs kept resident up to the
// block's capacity (behind the split, never past the capacity), and 4 vectors a lane from a
// given row width in vectors on.
TEST(RowPlan, WideResidentRowsAndFourVectorLanesFollowTheirThresholds) {
  RowRules r = row_rules("row_sum");
  r.wide_resident_rows_per_sm = 1;
  r.one_vector_max_vecs = 8;
  const auto plan = [&](std::int64_t rows, std::int64_t width, DType dt) {
    return plan_name(row_plan(rows, width, dt, kH200, r));
  };
  EXPECT_EQ(plan(132, 32768, DType::bf16), "resident.v4.l1024.t1024");
  EXPECT_EQ(plan(133, 32768, DType::bf16), "looped.c8192.t256");
  EXPECT_EQ(plan(4, 32768, DType::bf16), "resident.v4.l1024.t1024");
  EXPECT_EQ(plan(4, 32769, DType::bf16), "split.s5.t256");  // the split goes first
  EXPECT_EQ(plan(99, 65536, DType::bf16), "looped.c8192.t256");  // past 4096 vectors
  EXPECT_EQ(plan(1056, 256, DType::bf16), "resident.v4.l8.t128");
  EXPECT_EQ(plan(1056, 64, DType::bf16), "resident.v1.l8.t128");
  EXPECT_EQ(plan(1056, 64, DType::f32), "resident.v4.l4.t128");  // 16 vectors, lanes >= 4 elements
  r.wide_resident_rows_per_sm = 0;
  r.one_vector_max_vecs = 32;
  EXPECT_EQ(plan(132, 32768, DType::bf16), "looped.c8192.t256");
  EXPECT_EQ(plan(1056, 256, DType::bf16), "resident.v1.l32.t128");
}

TEST(RowPlan, EveryPlanCoversItsRow) {
  int plans = 0;
  for (const char* op : kRowOps)
    for (DType dt : kAllDTypes)
      for (std::int64_t rows : {1, 3, 131, 132, 4096})
        for (std::int64_t width : {1, 7, 760, 1000, 1024, 4097, 8192, 8193, 32769, 131072, 1 << 20}) {
          const RowPlan p = row_plan(rows, width, dt, kH200, row_rules(op));
          ++plans;
          const int v = static_cast<int>(16 / dtype_size(dt));
          if (p.kind == RowKind::resident) {
            EXPECT_GE(static_cast<std::int64_t>(p.lanes) * p.vecs * v, vector_elems(width, v, row_rules(op))) << describe(p);
            EXPECT_GE(p.lanes, v) << describe(p);  // a head or tail of up to v - 1 elements
            EXPECT_EQ(p.threads % p.lanes, 0) << describe(p);
          }
          if (p.kind == RowKind::looped) {
            EXPECT_EQ(p.chunk, p.threads * p.vecs * v);
          }
          EXPECT_GE(p.blocks, 1);
          EXPECT_LE(p.blocks, kH200.max_grid_x);
          EXPECT_LE(p.threads, 1024);
        }
  EXPECT_EQ(plans, 3 * 3 * 5 * 11);
}

// Every resident plan, automatic or forced, is one the kernels can run: a row that spans
// several warps has its block to itself (the block reduction spans the whole block). The
// forced `block` plan once put 2 rows of 64 lanes in a 128-thread block, and each row's sum
// was the sum of both (3x1000, 199x760).
TEST(RowPlan, ResidentPlansGiveAMultiWarpRowItsOwnBlock) {
  const Forced forced[] = {Forced::resident_warp, Forced::resident_block, Forced::resident_any};
  int block_plans = 0;
  for (const char* name : kRowOps)
    for (DType dt : kAllDTypes)
      for (std::int64_t rows : {1, 3, 199, 4096})
        for (std::int64_t width : {1, 2, 3, 7, 9, 33, 100, 760, 1000, 1024, 2048, 4097, 8192, 8193, 16384}) {
          const int v = static_cast<int>(16 / dtype_size(dt));
          const RowRules& op = row_rules(name);
          std::vector<RowPlan> plans;
          const RowPlan a = row_plan(rows, width, dt, kH200, op);
          if (a.kind == RowKind::resident) plans.push_back(a);
          for (Forced f : forced)
            if (plan_unsupported(f, width, dt, op).empty())
              plans.push_back(forced_plan(f, rows, width, dt, kH200, op));
          for (const RowPlan& p : plans) {
            const std::string where = std::to_string(rows) + "x" + std::to_string(width) + " " +
                                      std::string(dtype_name(dt)) + ": " + describe(p);
            EXPECT_EQ(resident_plan_problem(p, op), "") << where;
            EXPECT_GE(static_cast<std::int64_t>(p.lanes) * p.vecs * v, vector_elems(width, v, op)) << where;
            EXPECT_GE(p.lanes, v) << where;  // a head or tail of up to v - 1 elements
            EXPECT_EQ(p.blocks, (rows + p.threads / p.lanes - 1) / (p.threads / p.lanes)) << where;
            if (p.lanes > 32) {
              EXPECT_EQ(p.threads, p.lanes) << where;
              EXPECT_EQ(p.blocks, rows) << where;
              ++block_plans;
            }
          }
        }
  EXPECT_GT(block_plans, 0);
  // The forced block plan on 3x1000 float32 (250 vectors): 64 lanes, so 64 threads.
  const RowRules& row_sum = row_rules("row_sum");
  const RowPlan b = forced_plan(Forced::resident_block, 3, 1000, DType::f32, kH200, row_sum);
  EXPECT_EQ(b.lanes, 64);
  EXPECT_EQ(b.threads, 64);
  EXPECT_EQ(b.blocks, 3);
  // and the check the launchers make refuses the shape that was wrong.
  RowPlan two_rows = b;
  two_rows.threads = 128;
  EXPECT_NE(resident_plan_problem(two_rows, row_sum), "");
  // A plan past the kernel's launch bound is refused too (8 vectors: 128 threads for row_sum).
  RowPlan wide = b;
  wide.vecs = 8;
  wide.lanes = wide.threads = 256;
  EXPECT_NE(resident_plan_problem(wide, row_sum), "");
  EXPECT_EQ(resident_plan_problem(wide, row_rules("softmax")), "");
}

TEST(RowPlan, OnlyRowOpsHaveRules) {
  EXPECT_THROW(row_rules("add"), std::invalid_argument);
  EXPECT_EQ(row_rules("row_sum").split_row_bytes, sizeof(unsigned));  // its per-row counters
}

TEST(RowPlan, ForcedPlansSayWhatTheyCannotRun) {
  const RowRules& softmax = row_rules("softmax");
  // 256 whole vectors in a warp, 2048 of 8 in a block, with up to 3 scalars past them: 1027
  // elements are 256 whole vectors however the row is aligned, 1028 may be 257.
  EXPECT_TRUE(plan_unsupported(Forced::resident_warp, 1027, DType::f32, softmax).empty());
  EXPECT_FALSE(plan_unsupported(Forced::resident_warp, 1028, DType::f32, softmax).empty());
  EXPECT_TRUE(plan_unsupported(Forced::resident_any, 16387, DType::f32, softmax).empty());
  EXPECT_FALSE(plan_unsupported(Forced::resident_any, 16388, DType::f32, softmax).empty());
  // rmsnorm_backward counts every element: 4 x 256 + 8 x 256 vectors, 8192 float32 elements.
  EXPECT_TRUE(plan_unsupported(Forced::resident_any, 8192, DType::f32, row_rules("rmsnorm_backward")).empty());
  EXPECT_FALSE(plan_unsupported(Forced::resident_any, 8193, DType::f32, row_rules("rmsnorm_backward")).empty());
  EXPECT_FALSE(plan_unsupported(Forced::resident_any, 16384, DType::f32, row_rules("softmax_backward")).empty());
  EXPECT_TRUE(plan_unsupported(Forced::split, 1 << 20, DType::f32, softmax).empty());
}

// A serial control (a two-kernel plan with its second kernel launched after the first, not
// overlapping it) is the same plan by another launch: it must refuse what its plan refuses, or a
// comparison of the two in one run would compare different cases. (Its workspace is its plan's
// too, register_row_op sizes both from the same forced plan; asking needs the device's limits.)
TEST(RowPlan, SerialControlsRefuseWhatTheirPlansRefuse) {
  const struct {
    const char *op, *plan, *control;
  } pairs[] = {{"rmsnorm", "split", "split_serial"},
               {"softmax", "split", "split_serial"},
               {"softmax_backward", "split", "split_serial"},
               {"rmsnorm_backward", "looped", "looped_serial"}};
  int compared = 0, refused = 0;
  for (const auto& p : pairs) {
    const Variant &plan = registry().variant(p.op, p.plan), &control = registry().variant(p.op, p.control);
    for (DType dt : kAllDTypes)
      for (const Shape& shape : {Shape{64, 131072}, Shape{4, 32769}, Shape{1024, 32768}, Shape{3, 1 << 20},
                                 Shape{1, (1 << 20) + 1}}) {
        const Case c = make_case(registry().op(p.op), dt, shape);
        EXPECT_EQ(control.unsupported(c), plan.unsupported(c)) << case_label(c);
        refused += plan.unsupported(c).empty() ? 0 : 1;
        ++compared;
      }
  }
  EXPECT_EQ(compared, 4 * 3 * 5);
  EXPECT_EQ(refused, 4 * 3);  // the row past 2^20 columns, in every op and dtype: refusals are compared too
}

// A serial plan launches differently, so it must not share its plan's name or description (the
// grid's variant names, the spec builds' records); row_plan never sets it.
TEST(RowPlan, SerialPlansAreNamedApart) {
  RowPlan p = row_plan(4, 32769, DType::f32, kH200, row_rules("softmax"));
  ASSERT_EQ(p.kind, RowKind::split);
  EXPECT_FALSE(p.serial);
  RowPlan serial = p;
  serial.serial = true;
  EXPECT_NE(plan_name(serial), plan_name(p));
  EXPECT_NE(describe(serial), describe(p));
  EXPECT_EQ(plan_name(serial), plan_name(p) + ".serial");
}

DeviceTensor meta(std::int64_t rows, std::int64_t cols, std::int64_t stride, DType t = DType::f32) {
  return DeviceTensor{reinterpret_cast<void*>(std::uintptr_t{1} << 20), t, rows, cols, stride};
}

TEST(RowContract, RejectsOverlapWideAndHugeGrids) {
  EXPECT_TRUE(row_tensor_problem(meta(4, 100, 100), 4, 100, false).empty());
  EXPECT_TRUE(row_tensor_problem(meta(4, 100, 103), 4, 100, false).empty());
  EXPECT_NE(row_tensor_problem(meta(4, 100, 99), 4, 100, false).find("overlap"), std::string::npos);
  EXPECT_FALSE(row_tensor_problem(meta(4, 100, 103), 4, 100, true).empty());  // outputs contiguous
  EXPECT_FALSE(row_tensor_problem(meta(2, (1 << 20) + 1, (1 << 20) + 1), 2, (1 << 20) + 1, false).empty());
  EXPECT_FALSE(row_tensor_problem(meta(std::int64_t{1} << 31, 1, 1), std::int64_t{1} << 31, 1, false).empty());
  EXPECT_FALSE(row_tensor_problem(meta(4, 100, std::int64_t{1} << 62), 4, 100, false).empty());
  EXPECT_THROW(check_row_tensor("x", meta(4, 100, 99), 4, 100, false), std::invalid_argument);
  DeviceTensor odd = meta(4, 100, 100);
  odd.data = reinterpret_cast<void*>(std::uintptr_t{(1 << 20) + 2});
  EXPECT_FALSE(row_tensor_problem(odd, 4, 100, false).empty());
}

// A view spanning 2^33 elements (more than 32-bit indices reach) is accepted, and the row
// offsets the kernels use are exact 64-bit values.
TEST(RowContract, HugeViewsAreAddressedIn64Bits) {
  const std::int64_t rows = std::int64_t{1} << 20, width = 8192, stride = 8192 + 16;
  EXPECT_TRUE(row_tensor_problem(meta(rows, width, stride, DType::bf16), rows, width, false).empty());
  EXPECT_EQ(row_offset(rows - 1, stride), (rows - 1) * stride);
  EXPECT_GT(row_offset(rows - 1, stride), std::int64_t{1} << 32);
  EXPECT_GT(rows * stride, kIndexLimit);
}

// row_sum takes its head-and-tail-free path only when every row starts on a 16-byte boundary:
// the base, the stride and the width must all be whole 16-byte multiples.
TEST(RowContract, AlignedRowsNeedBaseStrideAndWidthOn16Bytes) {
  alignas(16) static float f[64];
  alignas(16) static std::uint16_t h[64];
  EXPECT_TRUE(rows_aligned(f, 8, 4));
  EXPECT_TRUE(rows_aligned(h, 16, 8));
  EXPECT_FALSE(rows_aligned(f + 1, 8, 4));  // base 4 bytes past a boundary
  EXPECT_FALSE(rows_aligned(f, 9, 4));      // row 1 starts 36 bytes in
  EXPECT_FALSE(rows_aligned(f, 8, 6));      // each row ends in half a vector
  EXPECT_FALSE(rows_aligned(h, 16, 12));    // 24-byte rows
  EXPECT_FALSE(rows_aligned(h, 12, 8));     // 24-byte stride
}

// The softmax oracle on masked rows, at widths where a row starts on and off a 16-byte
// boundary: -inf entries give exactly 0, a fully masked row NaN, a NaN entry a NaN row. (It
// used Eigen's vectorized exp, which maps -inf to 2e-308: a fully masked row came out uniform,
// 1/width, except the scalar-peeled first column of odd-width rows, 0.)
TEST(SoftmaxOracle, MaskedAndNaNRows) {
  const Op& op = registry().op("softmax");
  const double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t width : {1, 2, 7, 1000, 32769}) {
    const std::int64_t rows = 4;
    const Case c{"softmax", DType::f32, {rows, width}, 0};
    std::vector<HostTensor> in{HostTensor{op.inputs(c)[0], {}}};
    in[0].values.assign(static_cast<std::size_t>(rows * width), 0.0);
    Rng rng(11);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k < width; ++k) {
        double& x = in[0].values[r * width + k];
        x = rng.uniform(-4.0, 4.0);
        if (r == 0 && k % 3 == 0 && k != width - 1) x = -inf;  // partly masked
        if (r == 1) x = -inf;                                   // fully masked
        if (r == 2 && k == width / 2) x = std::nan("");        // a NaN
      }
    const std::vector<HostTensor> out = op.oracle(c, in);
    ASSERT_EQ(out.size(), 1u);
    const std::vector<double>& y = out[0].values;
    ASSERT_EQ(y.size(), static_cast<std::size_t>(rows * width));
    const std::string at = "width " + std::to_string(width);
    for (std::int64_t r : {0, 3}) {
      double sum = 0;
      std::int64_t bad = 0, first = -1;
      for (std::int64_t k = 0; k < width; ++k) {
        const double x = in[0].values[r * width + k], yk = y[r * width + k];
        const bool ok = std::isinf(x) ? yk == 0.0 : yk > 0.0;
        if (!ok && bad++ == 0) first = k;
        sum += yk;
      }
      EXPECT_EQ(bad, 0) << at << " row " << r << ": first wrong col " << first;
      EXPECT_NEAR(sum, 1.0, 1e-12) << at << " row " << r;
    }
    for (std::int64_t r : {1, 2}) {
      std::int64_t bad = 0, first = -1;
      for (std::int64_t k = 0; k < width; ++k)
        if (!std::isnan(y[r * width + k]) && bad++ == 0) first = k;
      EXPECT_EQ(bad, 0) << at << " row " << r << " should be NaN; first finite col " << first;
    }
  }
}

// The row_sum tolerance at width 2^20 catches a serial float32 sum (the drift the
// predecessor had) while a chunked tree sum, the kernels' order, passes.
TEST(RowSumTolerance, CatchesSerialDriftAtWidth2Pow20) {
  const Op& op = registry().op("row_sum");
  const Case c{"row_sum", DType::f32, {1, 1 << 20}, 0};
  const Tolerance tol = op.tolerance(c, 0);
  Rng rng(7);
  std::vector<float> x(1 << 20);
  double exact = 0;
  for (auto& v : x) {
    v = static_cast<float>(rng.uniform(-1.0, 1.0));
    exact += v;
  }
  float serial = 0;
  for (float v : x) serial += v;
  std::vector<float> level;
  for (std::size_t i = 0; i < x.size(); i += 32) {
    float s = 0;
    for (std::size_t j = i; j < i + 32; ++j) s += x[j];
    level.push_back(s);
  }
  while (level.size() > 1) {
    std::vector<float> next;
    for (std::size_t i = 0; i < level.size(); i += 2) next.push_back(level[i] + level[i + 1]);
    level.swap(next);
  }
  const double allowed = tol.atol + tol.rtol * std::fabs(exact);
  EXPECT_GT(std::fabs(serial - exact), allowed) << "serial float32 sum should drift past " << allowed;
  EXPECT_LE(std::fabs(level[0] - exact), allowed);
}

// Rows of one value: the errors share the sum's sign, so the tolerance grows with |sum| (rtol
// 32 u32 more); a serial float32 sum still drifts past it at width 2^20 and the kernels' tree
// order stays within it. The value is about the largest the op generates there (2^15 / width);
// a dropped element at this width is left to the random rows' tighter bound to catch.
TEST(RowSumTolerance, ConstantRowsCatchSerialDriftAndPassTheTree) {
  const Op& op = registry().op("row_sum");
  Case c{"row_sum", DType::f32, {1, 1 << 20}, 0};
  c.input_kind = InputKind::constant;
  const Tolerance tol = op.tolerance(c, 0);
  const float v = 0.0312499f;
  const double exact = static_cast<double>(v) * (1 << 20);
  float serial = 0;
  for (int i = 0; i < (1 << 20); ++i) serial += v;
  float chunk = 0;
  for (int j = 0; j < 32; ++j) chunk += v;
  float tree = chunk;  // 2^15 equal chunk sums: every level adds two equal values
  for (int level = 0; level < 15; ++level) tree += tree;
  const double allowed = tol.atol + tol.rtol * std::fabs(exact);
  EXPECT_GT(std::fabs(serial - exact), allowed) << "serial float32 sum should drift past " << allowed;
  EXPECT_LE(std::fabs(tree - exact), allowed);
}

}  // namespace
}  // namespace kbench::rows

namespace kbench::rows {
namespace {

// The grid times every plan row_plan could choose: under each op's own rules and under the
// thresholds `kbench fit` searches, the choice is always one of the grid's plans, and every
// grid plan is one its kernels run.
TEST(GridPlans, HoldEveryChoiceOfTheRuleAndOnlyRunnablePlans) {
  int cells = 0;
  for (const char* op : {"row_sum", "softmax", "softmax_backward", "rmsnorm", "rmsnorm_backward"})
    for (DType dt : kAllDTypes)
      for (std::int64_t rows : {1, 3, 33, 66, 131, 132, 264, 1056})
        for (std::int64_t width : {64, 127, 256, 1000, 1024, 2048, 4097, 8192, 8193, 16384, 28672, 32769, 131072, 1 << 20}) {
          ++cells;
          const std::vector<RowPlan> plans = grid_plans(rows, width, dt, kH200, row_rules(op));
          std::set<std::string> names;
          for (const RowPlan& p : plans) {
            EXPECT_TRUE(names.insert(grid_plan_name(p, row_rules(op))).second) << plan_name(p);
            if (p.kind == RowKind::resident) {
              EXPECT_EQ(resident_plan_problem(p, row_rules(op)), "") << op;
            }
          }
          RowRules r = row_rules(op);
          for (int divisor : {1, 2, 4, 1000})
            for (std::int64_t resident : {256, 1024, 4096})
              for (std::int64_t warp_max : {32, 256})
                for (bool by_rows : {false, true})
                  for (int wide_rows : {0, 2})
                    for (std::int64_t one_vector : {8, 32}) {
                      r.split_below_divisor = divisor;
                      r.auto_resident_vecs = resident;
                      r.warp_max_vecs = warp_max;
                      r.chunk_counts_rows = by_rows;
                      r.chunk_8192_per_sm = by_rows ? 1 : 4;
                      r.wide_resident_rows_per_sm = wide_rows;
                      r.one_vector_max_vecs = one_vector;
                      const std::string chosen = grid_plan_name(row_plan(rows, width, dt, kH200, r), r);
                      EXPECT_TRUE(names.count(chosen)) << op << " " << rows << "x" << width << " " << dtype_name(dt)
                                                       << ": " << chosen << " is not in the grid";
                    }
        }
  EXPECT_EQ(cells, 5 * 3 * 8 * 14);
}

TEST(GridPlans, NameEveryParameterThatChangesWhatRuns) {
  const RowRules& softmax = row_rules("softmax");
  const std::vector<RowPlan> wide = grid_plans(4, 131072, DType::f32, kH200, softmax);
  std::vector<std::string> names;
  for (const RowPlan& p : wide) names.push_back(plan_name(p));
  EXPECT_EQ(names, (std::vector<std::string>{"looped.c2048.t128", "looped.c4096.t256", "looped.c8192.t512",
                                             "split.s32.t256"}));
  // rmsnorm_backward's looped kernels run fixed tiles: one looped plan, not three.
  int looped = 0;
  for (const RowPlan& p : grid_plans(1056, 65536, DType::bf16, kH200, row_rules("rmsnorm_backward")))
    looped += p.kind == RowKind::looped;
  EXPECT_EQ(looped, 1);
  // Narrow rows: the warp plans of 1, 4 and 8 vectors a lane where they hold the row.
  names.clear();
  for (const RowPlan& p : grid_plans(1000, 1000, DType::f32, kH200, softmax)) names.push_back(plan_name(p));
  EXPECT_EQ(names, (std::vector<std::string>{"resident.v4.l64.t64", "resident.v8.l32.t128", "resident.v8.l64.t64"}));
}

}  // namespace
}  // namespace kbench::rows
