// The tolerance probe's input kinds without a GPU: each op's generator, for every kind it
// declares, on the probe's shapes and in every dtype, rounded to the dtype as prepare_case
// rounds it: large inputs are large and keep the oracle finite in the dtype, near-cancelling
// sums nearly cancel, constant rows are constant, spikes stand out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "experiments/tolerance_probe.hpp"
#include "kernels/common/input_kinds.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

// The inputs of c (generated and rounded to the dtype) and the oracle's outputs.
struct Drawn {
  std::vector<HostTensor> in, out;
};

Drawn draw(const Op& op, const Case& c, std::uint64_t seed = 11) {
  Drawn d;
  for (const TensorDesc& t : op.inputs(c)) d.in.push_back({t, std::vector<double>(static_cast<std::size_t>(t.elements()))});
  Rng rng(seed);
  op.generate(c, d.in, rng);
  for (auto& t : d.in) encode(t.desc.dtype, t.values);
  d.out = op.oracle(c, d.in);
  return d;
}

Case kind_case(const Op& op, DType dt, const Shape& shape, InputKind kind) {
  Case c = make_case(op, dt, shape);
  c.input_kind = kind;
  return c;
}

double max_abs(const HostTensor& t) {
  double m = 0;
  for (const double v : t.values) m = std::max(m, std::fabs(v));
  return m;
}

// Row r of t.
std::vector<double> row(const HostTensor& t, std::int64_t r) {
  const auto begin = t.values.begin() + r * t.desc.cols;
  return {begin, begin + t.desc.cols};
}

bool declares(const Op& op, InputKind kind) {
  return std::find(op.input_kinds.begin(), op.input_kinds.end(), kind) != op.input_kinds.end();
}

TEST(InputKinds, EveryKindGivesFiniteOraclesThatFitTheDtype) {
  for (const Op& op : registry().ops()) {
    EXPECT_EQ(op.input_kinds.front(), InputKind::random) << op.name;
    for (const DType dt : kAllDTypes)
      for (const InputKind kind : op.input_kinds)
        for (const Shape& shape : probe_shapes(op.shape_rank)) {
          const Case c = kind_case(op, dt, shape, kind);
          const Drawn d = draw(op, c);
          bool any_nonzero = false;
          for (const auto& t : d.in)
            for (const double v : t.values) {
              ASSERT_TRUE(std::isfinite(v)) << case_label(c);
              any_nonzero = any_nonzero || v != 0;
            }
          EXPECT_TRUE(any_nonzero) << case_label(c);
          for (const auto& t : d.out)
            for (const double v : t.values) {
              ASSERT_TRUE(std::isfinite(v)) << case_label(c) << " output " << t.desc.name;
              ASSERT_LE(std::fabs(v), dtype_max(dt)) << case_label(c) << " output " << t.desc.name;
            }
        }
  }
}

TEST(InputKinds, LargeInputsAreLarge) {
  for (const Op& op : registry().ops()) {
    if (!declares(op, InputKind::large)) continue;
    for (const DType dt : kAllDTypes)
      for (const Shape& shape : probe_shapes(op.shape_rank)) {
        const double random = max_abs(draw(op, kind_case(op, dt, shape, InputKind::random)).in[0]);
        const double large = max_abs(draw(op, kind_case(op, dt, shape, InputKind::large)).in[0]);
        EXPECT_GE(large, 10 * random) << op.name << " " << dtype_name(dt) << " " << shape_string(shape);
      }
  }
}

TEST(InputKinds, ConstantRowsRepeatOneValue) {
  for (const Op& op : registry().ops()) {
    if (!declares(op, InputKind::constant)) continue;
    for (const DType dt : kAllDTypes)
      for (const Shape& shape : probe_shapes(op.shape_rank)) {
        const Case c = kind_case(op, dt, shape, InputKind::constant);
        const Drawn d = draw(op, c);
        const HostTensor& x = d.in[0];
        for (std::int64_t r = 0; r < x.desc.rows; ++r) {
          const std::vector<double> values = row(x, r);
          EXPECT_TRUE(std::all_of(values.begin(), values.end(), [&](double v) { return v == values[0]; }))
              << case_label(c) << " row " << r;
        }
      }
  }
}

// row_sum's rows, add's and rmsnorm's pairs: what is left of the sum after rounding to the
// dtype is the noise (1e-3 a pair) and the roundings of x and of -x + noise (half an ulp of
// |x| <= 1 each), with a third rounding's room where the sum itself is rounded.
TEST(InputKinds, CancellingSumsNearlyCancel) {
  const Op& row_sum = registry().op("row_sum");
  const Op& add = registry().op("add");
  const Op& rmsnorm = registry().op("rmsnorm");
  for (const DType dt : kAllDTypes) {
    const double per_pair = 1e-3 + 3 * dtype_epsilon(dt);
    for (const Shape& shape : probe_shapes(2)) {
      const Case c = kind_case(row_sum, dt, shape, InputKind::cancelling);
      const Drawn d = draw(row_sum, c);
      for (std::int64_t r = 0; r < shape[0]; ++r) {
        const std::vector<double> x = row(d.in[0], r);
        double abs_sum = 0;
        for (const double v : x) abs_sum += std::fabs(v);
        const double pairs = std::ceil(static_cast<double>(shape[1]) / 2);
        EXPECT_LE(std::fabs(d.out[0].values[static_cast<std::size_t>(r)]), pairs * per_pair) << case_label(c);
        if (shape[1] >= 64) {
          EXPECT_LE(std::fabs(d.out[0].values[static_cast<std::size_t>(r)]), 0.05 * abs_sum) << case_label(c);
        }
      }
      // rmsnorm's h = x + r of such pairs, elementwise.
      const Case rc = kind_case(rmsnorm, dt, shape, InputKind::cancelling);
      EXPECT_LE(max_abs(draw(rmsnorm, rc).out[0]), 1e-2 + 3 * dtype_epsilon(dt)) << case_label(rc);
    }
    for (const Shape& shape : probe_shapes(1)) {
      const Case c = kind_case(add, dt, shape, InputKind::cancelling);
      EXPECT_LE(max_abs(draw(add, c).out[0]), per_pair) << case_label(c);
    }
  }
}

TEST(InputKinds, SpikesStandOut) {
  const Op& softmax = registry().op("softmax");
  const Op& backward = registry().op("softmax_backward");
  for (const DType dt : kAllDTypes)
    for (const Shape& shape : probe_shapes(2)) {
      const Case c = kind_case(softmax, dt, shape, InputKind::spike);
      const Drawn d = draw(softmax, c);
      const Drawn b = draw(backward, kind_case(backward, dt, shape, InputKind::spike));
      for (std::int64_t r = 0; r < shape[0]; ++r) {
        std::vector<double> x = row(d.in[0], r);
        std::sort(x.begin(), x.end());
        EXPECT_EQ(x.back(), 16.0) << case_label(c);
        if (x.size() > 1) {
          EXPECT_GE(x.back() - x[x.size() - 2], 12.0) << case_label(c);
        }
        const std::vector<double> y = row(b.in[0], r);  // a softmax with one logit of 14
        EXPECT_GE(*std::max_element(y.begin(), y.end()), 0.5) << case_label(c);
      }
    }
}

// Inputs are drawn in parallel, one generator per block of kDrawBlock elements (per row for
// the per-row kinds), each seeded from one draw of the case's generator: the values are those
// of the serial loop over the blocks below, whatever the core count, and the case's generator
// moves by exactly one draw.
TEST(InputKinds, ParallelDrawsAreTheSerialBlocks) {
  HostTensor t{TensorDesc{"x", DType::f32, 1, 3 * kDrawBlock + 123, 3 * kDrawBlock + 123}, {}};
  t.values.resize(static_cast<std::size_t>(t.desc.cols));
  Rng rng(5);
  fill_uniform(t, rng, -2.0, 3.0);
  Rng serial(5);
  const std::uint64_t base = serial.next_u64();
  EXPECT_EQ(rng.next_u64(), serial.next_u64());  // one draw taken, whatever the blocks
  for (std::int64_t b = 0; b * kDrawBlock < t.desc.cols; ++b) {
    Rng g = block_rng(base, static_cast<std::uint64_t>(b));
    for (std::int64_t k = b * kDrawBlock; k < std::min(t.desc.cols, (b + 1) * kDrawBlock); ++k)
      ASSERT_EQ(t.values[static_cast<std::size_t>(k)], g.uniform(-2.0, 3.0)) << "element " << k;
  }
  const auto [lo, hi] = std::minmax_element(t.values.begin(), t.values.end());
  EXPECT_GE(*lo, -2.0);
  EXPECT_LT(*hi, 3.0);
  double mean = 0;
  for (const double v : t.values) mean += v / static_cast<double>(t.values.size());
  EXPECT_NEAR(mean, 0.5, 0.02);  // uniform in [-2, 3): 0.5 +- 1.44 / sqrt(196731)
}

TEST(InputKinds, PerRowDrawsAreTheSerialRows) {
  // 600 rows of 1000: several pieces of rows, each row its own generator.
  HostTensor t{TensorDesc{"x", DType::f32, 600, 1000, 1000}, std::vector<double>(600000)};
  Rng rng(8);
  fill_constant_rows(t, rng, -1.0, 1.0);
  Rng serial(8);
  const std::uint64_t base = serial.next_u64();
  EXPECT_EQ(rng.next_u64(), serial.next_u64());
  std::vector<double> firsts;
  for (std::int64_t r = 0; r < t.desc.rows; ++r) {
    Rng g = block_rng(base, static_cast<std::uint64_t>(r));
    const double v = g.uniform(-1.0, 1.0);
    const std::vector<double> values = row(t, r);
    ASSERT_TRUE(std::all_of(values.begin(), values.end(), [&](double x) { return x == v; })) << "row " << r;
    firsts.push_back(v);
  }
  std::sort(firsts.begin(), firsts.end());
  EXPECT_EQ(std::adjacent_find(firsts.begin(), firsts.end()), firsts.end());  // rows differ
}

// The per-row kinds on inputs large enough to be drawn in parallel keep what they promise:
// constant rows, cancelling pairs, one spike per row.
TEST(InputKinds, KindsHoldOnLargeInputs) {
  const Shape shape{257, 1031};  // an odd width, 4 blocks of elements
  const Op& row_sum = registry().op("row_sum");
  const Op& softmax = registry().op("softmax");
  for (const DType dt : {DType::f32, DType::bf16}) {
    const Drawn constant = draw(row_sum, kind_case(row_sum, dt, shape, InputKind::constant));
    for (std::int64_t r = 0; r < shape[0]; ++r) {
      const std::vector<double> values = row(constant.in[0], r);
      ASSERT_TRUE(std::all_of(values.begin(), values.end(), [&](double v) { return v == values[0]; })) << r;
    }
    const Drawn cancelling = draw(row_sum, kind_case(row_sum, dt, shape, InputKind::cancelling));
    const double per_pair = 1e-3 + 3 * dtype_epsilon(dt);
    for (const double sum : cancelling.out[0].values) ASSERT_LE(std::fabs(sum), 516 * per_pair);
    const Drawn spiked = draw(softmax, kind_case(softmax, dt, shape, InputKind::spike));
    for (std::int64_t r = 0; r < shape[0]; ++r) {
      const std::vector<double> x = row(spiked.in[0], r);
      ASSERT_EQ(std::count(x.begin(), x.end(), 16.0), 1) << "row " << r;
    }
  }
}

// A case's inputs depend on its seed alone: drawn twice they are the same, with another seed
// not.
TEST(InputKinds, InputsDependOnTheSeedAlone) {
  for (const Op& op : registry().ops()) {
    const Shape shape = op.shape_rank == 2 ? Shape{300, 700} : Shape{300000};
    if (op.shape_rank > 2) continue;
    const Case c = make_case(op, DType::bf16, shape);
    const Drawn a = draw(op, c, 3), b = draw(op, c, 3), other = draw(op, c, 4);
    for (std::size_t i = 0; i < a.in.size(); ++i) {
      EXPECT_EQ(a.in[i].values, b.in[i].values) << op.name << " input " << i;
      EXPECT_NE(a.in[i].values, other.in[i].values) << op.name << " input " << i;
    }
  }
}

}  // namespace
}  // namespace kbench
