// Row ops on the GPU: every variant of row_sum, softmax and softmax_backward against the FP64
// oracle (through prepare_case/check_variant: fresh inputs, NaN-poisoned outputs, every
// element compared) on awkward shapes, strided rows, masked, constant and large rows; broken
// kernels that the checker must reject; and the launch contracts.
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/rows/row_contract.hpp"

namespace kbench::rows {
namespace {

struct Shape {
  std::int64_t rows, cols;
};
// 7x64, 5x8192 and 2x16384 are whole 16-byte vectors per row (row_sum's aligned kernel): one
// vector per lane with several rows per block, a 512-thread and a 1024-thread block per row.
const std::vector<Shape> kShapes = {{1, 1},     {7, 64},     {3, 1000},    {199, 760},
                                    {5, 8192},  {2, 16384},  {131, 8193},  {4, 32769},
                                    {64, 131072}, {3, 1 << 20}};
const char* kOps[] = {"row_sum", "softmax", "softmax_backward", "rmsnorm", "rmsnorm_backward"};

std::string label(const Case& c) {
  return c.op + " " + std::string(dtype_name(c.dtype)) + " " + shape_string(c.shape) +
         (c.row_stride ? " stride " + std::to_string(c.row_stride) : "");
}

// The case of a registered row op, its parameters at their defaults unless `params` sets them.
Case row_case(const std::string& op, DType dt, std::int64_t rows, std::int64_t cols, std::int64_t stride = 0,
              const std::map<std::string, double>& params = {}) {
  Case c = make_case(registry().op(op), dt, {rows, cols}, params);
  c.row_stride = stride;
  return c;
}

// Checks every variant of c.op that supports c; returns how many ran. At least four always
// can (auto, looped, split and the baseline take every row shape): fewer means variants were
// skipped that should have run.
int check_all(const Op& op, const Case& c, const InputTweak& tweak = {}, std::uint64_t seed = 1) {
  Rng rng(seed);
  PreparedCase pc = prepare_case(op, c, rng, tweak);
  int ran = 0;
  for (const Variant* v : registry().variants(c.op)) {
    if (!v->unsupported(c).empty()) continue;
    const CheckInfo info = check_variant(pc, *v, nullptr);
    EXPECT_TRUE(info.passed) << label(c) << " variant " << v->name << ": " << info.detail;
    ++ran;
  }
  EXPECT_GE(ran, 4) << label(c);
  return ran;
}

TEST(RowsGpu, EveryVariantOnAwkwardShapes) {
  KB_REQUIRE_GPU();
  for (const char* name : kOps)
    for (DType dt : kAllDTypes)
      for (const Shape& s : kShapes) {
        check_all(registry().op(name), row_case(name, dt, s.rows, s.cols));
      }
}

TEST(RowsGpu, StridedRows) {
  KB_REQUIRE_GPU();
  for (const char* name : kOps)
    for (DType dt : kAllDTypes)
      // 5x7: tiny misaligned rows, whose scalar head and tail outnumber a narrow warp plan's lanes.
      for (const Shape& s : {Shape{5, 7}, Shape{3, 1000}, Shape{131, 8193}, Shape{4, 32769}, Shape{160, 4096}})
        for (std::int64_t extra : {3, 8, 64}) {
          check_all(registry().op(name), row_case(name, dt, s.rows, s.cols, s.cols + extra));
        }
}

// Enough rows per SM that the looped plan runs its smaller chunks too.
TEST(RowsGpu, ManyWideRows) {
  KB_REQUIRE_GPU();
  for (const char* name : kOps)
    for (DType dt : kAllDTypes) check_all(registry().op(name), row_case(name, dt, 300, 40000));
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// Row 0: a masked prefix longer than a chunk (lanes that see only -inf first), then every
// third entry masked. Row 1: fully masked (NaN, as PyTorch). Row 2: one NaN (a NaN row).
// Other rows: masked tail.
void mask_rows(const Case&, std::vector<HostTensor>& in) {
  auto& t = in[0];
  const std::int64_t R = t.desc.rows, C = t.desc.cols;
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t c = 0; c < C; ++c) {
      double& v = t.values[r * C + c];
      if (r == 0 && (c < std::min<std::int64_t>(C - 1, 9000) || c % 3 == 0) && c != C - 1) v = -kInf;
      if (r == 1) v = -kInf;
      if (r == 2 && c == C / 2) v = std::nan("");
      if (r > 2 && c > C / 2) v = -kInf;
    }
}

TEST(RowsGpu, MaskedSoftmaxRows) {
  KB_REQUIRE_GPU();
  for (DType dt : kAllDTypes)
    for (const Shape& s : {Shape{3, 1000}, Shape{4, 32769}, Shape{131, 8193}, Shape{199, 760},
                           Shape{3, 1 << 20}, Shape{140, 20000}})
      check_all(registry().op("softmax"), Case{"softmax", dt, {s.rows, s.cols}, 0}, mask_rows);
}

TEST(RowsGpu, ConstantAndLargeRows) {
  KB_REQUIRE_GPU();
  auto constant = [](const Case&, std::vector<HostTensor>& in) {
    for (auto& t : in)
      for (auto& v : t.values) v = 0.375;
  };
  // row_sum of a constant row: the value for float16 is halved until the row sum fits
  // float16's range with room (<= 2^15; 65504 is the largest finite): 0.375 x 2^20 = 393216
  // overflows the float16 output, so every variant, CUB included, rightly wrote inf while
  // the unrounded oracle expected 393216. 0.375 / 2^k = 3 x 2^-(3+k): every partial sum is a
  // multiple of it below 2^24 of them, so the sum is exact in any order.
  auto constant_sum = [](const Case& c, std::vector<HostTensor>& in) {
    double v = 0.375;
    if (c.dtype == DType::f16)
      while (v * static_cast<double>(c.shape.at(1)) > 32768.0) v /= 2;
    for (auto& t : in)
      for (auto& x : t.values) x = v;
  };
  auto large = [](const Case&, std::vector<HostTensor>& in) {
    Rng rng(3);
    for (auto& v : in[0].values) v = rng.uniform(-1e4, 1e4);
  };
  for (DType dt : kAllDTypes)
    for (const Shape& s : {Shape{3, 1000}, Shape{131, 8193}, Shape{4, 32769}, Shape{3, 1 << 20}}) {
      const Case sm{"softmax", dt, {s.rows, s.cols}, 0};
      check_all(registry().op("softmax"), sm, constant);
      check_all(registry().op("softmax"), sm, large);
      const Case rs{"row_sum", dt, {s.rows, s.cols}, 0};
      check_all(registry().op("row_sum"), rs, constant_sum);
      // Inputs 1e4 times larger: the row_sum tolerance (written for |x| <= 1) scales with them.
      // float16 would overflow (1e4 x 1000 > 65504), so it keeps the constant case only.
      if (dt != DType::f16) {
        Op scaled = registry().op("row_sum");
        const auto base = scaled.tolerance;
        scaled.tolerance = [base](const Case& c, std::size_t i) {
          Tolerance t = base(c, i);
          t.atol *= 1e4;
          return t;
        };
        check_all(scaled, rs, large);
      }
      const Case bw{"softmax_backward", dt, {s.rows, s.cols}, 0};
      check_all(registry().op("softmax_backward"), bw, constant);
    }
}

TEST(RowsGpu, LaunchersRejectBrokenContracts) {
  KB_REQUIRE_GPU();
  const Case c{"softmax", DType::f32, {4, 100}, 0};
  DeviceBuffer x(4 * 100 * 4 + 256), y(4 * 100 * 4 + 256), ws(1 << 16);
  const DeviceTensor overlap{x.get(), DType::f32, 4, 100, 99};
  const DeviceTensor out{y.get(), DType::f32, 4, 100, 100};
  const DeviceTensor in{x.get(), DType::f32, 4, 100, 100};
  for (const Variant* v : registry().variants("softmax")) {
    const std::vector<DeviceTensor> ins{overlap}, outs{out};
    EXPECT_THROW(v->launch(LaunchArgs{c, ins, outs, ws.get(), nullptr}), std::invalid_argument) << v->name;
  }
  const Case wide{"softmax", DType::f32, {1, (1 << 20) + 1}, 0};
  for (const Variant* v : registry().variants("softmax")) EXPECT_FALSE(v->unsupported(wide).empty()) << v->name;
  // Output rows strided: rejected too.
  const DeviceTensor strided_out{y.get(), DType::f32, 2, 100, 150};
  const Case c2{"softmax", DType::f32, {2, 100}, 0};
  const DeviceTensor in2{x.get(), DType::f32, 2, 100, 100};
  const std::vector<DeviceTensor> ins{in2}, outs{strided_out};
  EXPECT_THROW(registry().variant("softmax", "auto").launch(LaunchArgs{c2, ins, outs, ws.get(), nullptr}),
               std::invalid_argument);
  (void)in;
}

}  // namespace
}  // namespace kbench::rows
