// Host-side conversions and the copy/add oracles against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "core/dtype.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

TEST(DType, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);               // rounds up to infinity
  EXPECT_EQ(float_to_half_bits(1.0f + 1.0f / 2048), 0x3c00);     // tie -> even (down)
  EXPECT_EQ(float_to_half_bits(1.0f + 3.0f / 2048), 0x3c02);     // tie -> even (up)
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -26)), 0x0000);  // below half of it
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(NAN))));
  EXPECT_EQ(half_bits_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
}

TEST(DType, Bf16ConversionsRoundToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 1.0f / 256), 0x3f80);  // tie -> even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_EQ(bf16_bits_to_float(0xc040), -3.0f);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(NAN))));
}

TEST(DType, EncodeRoundsTheValuesItWasGiven) {
  std::vector<double> v{0.1, 1.0 / 3.0};
  const auto bytes = encode(DType::f16, v);
  EXPECT_EQ(bytes.size(), 4u);
  EXPECT_EQ(v[1], 0.333251953125);
  EXPECT_EQ(decode(DType::f16, bytes), v);
}

TEST(DType, ParseNamesAndRejectUnknown) {
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(dtype_name(parse_dtype("fp16")), "float16");
  EXPECT_ANY_THROW(parse_dtype("int8"));
}

TEST(Oracles, AddAndCopyOnHandValues) {
  const Op& add = registry().op("add");
  const Case c{"add", DType::f32, {3}};
  const auto in_desc = add.inputs(c);
  std::vector<HostTensor> in{{in_desc[0], {1.5, -2.0, 1e8}}, {in_desc[1], {0.25, 2.0, 1.0}}};
  const auto out = add.oracle(c, in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].values, (std::vector<double>{1.75, 0.0, 100000001.0}));
  EXPECT_DOUBLE_EQ(add.bytes(c), 3 * 3 * 4);

  const Op& copy = registry().op("copy");
  const Case cc{"copy", DType::f16, {2}};
  std::vector<HostTensor> cin{{copy.inputs(cc)[0], {0.5, -7.0}}};
  EXPECT_EQ(copy.oracle(cc, cin)[0].values, (std::vector<double>{0.5, -7.0}));
  EXPECT_DOUBLE_EQ(copy.bytes(cc), 2 * 2 * 2);
  EXPECT_EQ(copy.tolerance(cc, 0).rtol, 0);
}

TEST(Oracles, AddToleranceIsOneRoundingOfTheDtype) {
  const Op& add = registry().op("add");
  EXPECT_DOUBLE_EQ(add.tolerance(Case{"add", DType::f32, {1}}, 0).rtol, std::ldexp(1.0, -24));
  EXPECT_GT(add.tolerance(Case{"add", DType::bf16, {1}}, 0).rtol, std::ldexp(1.0, -8));
  EXPECT_LT(add.tolerance(Case{"add", DType::bf16, {1}}, 0).rtol, std::ldexp(1.0, -7));
}

}  // namespace
}  // namespace kbench
