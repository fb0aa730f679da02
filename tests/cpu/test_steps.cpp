// The training-step ops without a GPU: their registration (variants, parameters, tensors), their
// oracle as the parts' oracles composed by hand, their bytes as the parts' sum. Their command-line
// refusals are in test_cli.cpp, the GPU checks of the variants in tests/gpu/test_steps.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu/run_command.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/common/step.hpp"

namespace kbench {
namespace {

std::vector<std::string> names(const std::vector<TensorDesc>& tensors) {
  std::vector<std::string> out;
  for (const TensorDesc& t : tensors) out.push_back(t.name);
  return out;
}

// Inputs of `op` at `c`, filled by its generator (reproducibly).
std::vector<HostTensor> generated(const Op& op, const Case& c) {
  std::vector<HostTensor> in;
  for (const TensorDesc& d : op.inputs(c)) in.push_back({d, std::vector<double>(static_cast<std::size_t>(d.elements()))});
  Rng rng(5);
  op.generate(c, in, rng);
  return in;
}

TEST(Steps, RegisteredWithAutoItsSerialControlAndAnEagerBaseline) {
  for (const char* name : {"softmax_step", "rmsnorm_step"}) {
    const std::vector<const Variant*> vs = registry().variants(name);
    ASSERT_EQ(vs.size(), 3u) << name;
    EXPECT_EQ(vs[0]->name, "auto");
    EXPECT_FALSE(vs[0]->baseline);
    EXPECT_EQ(vs[1]->name, "auto_serial");
    EXPECT_FALSE(vs[1]->baseline);
    EXPECT_EQ(vs[2]->name, "eager");
    EXPECT_TRUE(vs[2]->baseline);
    EXPECT_EQ(registry().op(name).shape_rank, 2u);
  }
  const test::CommandResult list = test::run_kbench("list");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("## softmax_step\n"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("## rmsnorm_step\n"), std::string::npos) << list.out;
}

TEST(Steps, ParametersAreThoseOfTheParts) {
  EXPECT_TRUE(registry().op("softmax_step").params.empty());
  std::vector<std::string> params;
  for (const OpParam& p : registry().op("rmsnorm_step").params) params.push_back(p.name);
  EXPECT_EQ(params, (std::vector<std::string>{"eps", "dh", "frozen"}));  // eps once
}

TEST(Steps, TensorsFollowTheParameters) {
  const Op& sm = registry().op("softmax_step");
  const Case s = make_case(sm, DType::f16, {3, 10});
  EXPECT_EQ(names(sm.inputs(s)), (std::vector<std::string>{"x", "dy"}));
  EXPECT_EQ(names(sm.outputs(s)), (std::vector<std::string>{"y", "dx"}));

  const Op& rms = registry().op("rmsnorm_step");
  const Case full = make_case(rms, DType::bf16, {3, 10});
  EXPECT_EQ(names(rms.inputs(full)), (std::vector<std::string>{"x", "r", "w", "dy", "dh"}));
  EXPECT_EQ(names(rms.outputs(full)), (std::vector<std::string>{"h", "y", "dx", "dw"}));
  const Case bare = make_case(rms, DType::bf16, {3, 10}, {{"dh", 0}, {"frozen", 1}});
  EXPECT_EQ(names(rms.inputs(bare)), (std::vector<std::string>{"x", "r", "w", "dy"}));
  EXPECT_EQ(names(rms.outputs(bare)), (std::vector<std::string>{"h", "y", "dx"}));
  // The case's row stride reaches the step's inputs; outputs stay contiguous.
  Case strided = full;
  strided.row_stride = 16;
  EXPECT_EQ(rms.inputs(strided)[0].row_stride, 16);
  EXPECT_EQ(rms.inputs(strided)[2].row_stride, 10);  // w: one row
  EXPECT_EQ(rms.outputs(strided)[0].row_stride, 10);
}

TEST(Steps, BytesAndFlopsAreThePartsSum) {
  const Case s = make_case(registry().op("softmax_step"), DType::f32, {8, 100});
  EXPECT_DOUBLE_EQ(registry().op("softmax_step").bytes(s), (2 + 3) * 8 * 100 * 4.0);
  EXPECT_DOUBLE_EQ(registry().op("softmax_step").flops(s), 0.0);
  const Op& rms = registry().op("rmsnorm_step");
  for (double dh : {0.0, 1.0})
    for (double frozen : {0.0, 1.0}) {
      const Case c = make_case(rms, DType::f16, {8, 100}, {{"dh", dh}, {"frozen", frozen}});
      const double expected = registry().op("rmsnorm").bytes(part_case(registry().op("rmsnorm"), c)) +
                              registry().op("rmsnorm_backward").bytes(part_case(registry().op("rmsnorm_backward"), c));
      EXPECT_DOUBLE_EQ(rms.bytes(c), expected);
      // forward x, r, w, h, y; backward h, w, dy, [dh], dx, [dw]
      EXPECT_DOUBLE_EQ(expected, ((4 + 3 + dh) * 800 + 100 * (1 + 1 + (frozen != 0 ? 0 : 1))) * 2);
    }
}

// The step's oracle is the forward's on its inputs, then the backward's on the forward's
// outputs: composed here by hand from the registered ops.
TEST(Steps, SoftmaxStepOracleComposesTheParts) {
  const Op& step = registry().op("softmax_step");
  const Case c = make_case(step, DType::f32, {5, 37});
  const std::vector<HostTensor> in = generated(step, c);
  const std::vector<HostTensor> out = step.oracle(c, in);
  ASSERT_EQ(out.size(), 2u);
  const Op& fwd = registry().op("softmax");
  const Op& bwd = registry().op("softmax_backward");
  const std::vector<HostTensor> y = fwd.oracle(part_case(fwd, c), {in[0]});
  const std::vector<HostTensor> dx = bwd.oracle(part_case(bwd, c), {y[0], in[1]});
  EXPECT_EQ(out[0].values, y[0].values);
  EXPECT_EQ(out[1].values, dx[0].values);
  double dx_sum = 0;  // each row of dx sums to 0 (sum y = 1): the backward really ran on y
  for (double v : out[1].values) dx_sum += std::abs(v);
  EXPECT_GT(dx_sum, 0.0);
}

TEST(Steps, RmsnormStepOracleComposesTheParts) {
  const Op& step = registry().op("rmsnorm_step");
  const Op& fwd = registry().op("rmsnorm");
  const Op& bwd = registry().op("rmsnorm_backward");
  for (double dh : {0.0, 1.0})
    for (double frozen : {0.0, 1.0}) {
      const Case c = make_case(step, DType::bf16, {6, 33}, {{"dh", dh}, {"frozen", frozen}, {"eps", 1e-3}});
      const std::vector<HostTensor> in = generated(step, c);
      const std::vector<HostTensor> out = step.oracle(c, in);
      const std::vector<HostTensor> hy = fwd.oracle(part_case(fwd, c), {in[0], in[1], in[2]});
      std::vector<HostTensor> bwd_in{hy[0], in[2], in[3]};
      if (dh != 0) bwd_in.push_back(in[4]);
      const std::vector<HostTensor> grads = bwd.oracle(part_case(bwd, c), bwd_in);
      ASSERT_EQ(out.size(), 2 + grads.size());
      EXPECT_EQ(out[0].values, hy[0].values);
      EXPECT_EQ(out[1].values, hy[1].values);
      for (std::size_t i = 0; i < grads.size(); ++i) EXPECT_EQ(out[2 + i].values, grads[i].values) << i;
    }
}

TEST(Steps, TolerancesAreThePartsOrWider) {
  const Op& sm = registry().op("softmax_step");
  const Case s = make_case(sm, DType::bf16, {4, 4096});
  const Tolerance y = sm.tolerance(s, 0), dx = sm.tolerance(s, 1);
  const Tolerance fy = registry().op("softmax").tolerance(part_case(registry().op("softmax"), s), 0);
  const Tolerance bdx = registry().op("softmax_backward").tolerance(part_case(registry().op("softmax_backward"), s), 0);
  EXPECT_EQ(y.rtol, fy.rtol);
  EXPECT_GT(dx.rtol, bdx.rtol);
  EXPECT_GT(dx.atol, bdx.atol);
  EXPECT_LT(dx.rtol, 2 * (fy.rtol + bdx.rtol));  // wider, not unbounded
  const Op& rms = registry().op("rmsnorm_step");
  const Case r = make_case(rms, DType::f16, {4, 4096});
  EXPECT_EQ(rms.tolerance(r, 0).rtol, 0.0);  // h: one rounding, as the oracle
  EXPECT_EQ(rms.tolerance(r, 3).atol,
            registry().op("rmsnorm_backward").tolerance(part_case(registry().op("rmsnorm_backward"), r), 1).atol);
}

}  // namespace
}  // namespace kbench
