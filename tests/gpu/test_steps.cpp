// The training steps on the GPU: every variant of softmax_step and rmsnorm_step against the FP64
// oracle (the parts' oracles composed) on awkward and strided shapes, rmsnorm_step with dh and
// dw present and absent, and a negative control: a step whose backward reads the step's input
// instead of the forward's output must fail the check.
#include <functional>
#include <map>
#include <string>

#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/common/step.hpp"

namespace kbench {
namespace {

const char* const kSteps[] = {"softmax_step", "rmsnorm_step"};

struct Shape2 {
  std::int64_t rows, cols;
};
const Shape2 kShapes[] = {{1, 1}, {3, 1000}, {199, 760}, {131, 8193}, {4, 32769}};

Case step_case(const char* op, DType dt, Shape2 s, std::int64_t stride = 0, const std::map<std::string, double>& p = {}) {
  Case c = make_case(registry().op(op), dt, {s.rows, s.cols}, p);
  c.row_stride = stride;
  return c;
}

// auto, auto_serial and eager: every variant of a row step takes every row shape.
constexpr int kStepVariants = 3;

// Every variant of the step on the case.
int check_all(const Case& c) {
  Rng rng(7);
  const PreparedCase pc = prepare_case(registry().op(c.op), c, rng);
  int ran = 0;
  for (const Variant* v : registry().variants(c.op)) {
    EXPECT_EQ(v->unsupported(c), "") << case_label(c) << " " << v->name;
    const CheckInfo info = check_variant(pc, *v, nullptr);
    EXPECT_TRUE(info.passed) << case_label(c) << " stride " << c.row_stride << " variant " << v->name << ": "
                             << info.detail;
    ++ran;
  }
  EXPECT_EQ(ran, kStepVariants) << case_label(c);
  return ran;
}

TEST(StepsGpu, EveryVariantOnAwkwardShapes) {
  KB_REQUIRE_GPU();
  int ran = 0;
  for (const char* op : kSteps)
    for (DType dt : kAllDTypes)
      for (const Shape2& s : kShapes) ran += check_all(step_case(op, dt, s));
  EXPECT_EQ(ran, 2 * 3 * 5 * kStepVariants);
}

TEST(StepsGpu, StridedRows) {
  KB_REQUIRE_GPU();
  int ran = 0;
  for (const char* op : kSteps)
    for (DType dt : kAllDTypes)
      for (const Shape2& s : {Shape2{5, 7}, Shape2{199, 760}, Shape2{4, 32769}})
        for (std::int64_t extra : {3, 64}) ran += check_all(step_case(op, dt, s, s.cols + extra));
  EXPECT_EQ(ran, 2 * 3 * 3 * 2 * kStepVariants);
}

// Wide rows with few of them: the split plans of both parts, and their workspaces side by side.
TEST(StepsGpu, FewWideRows) {
  KB_REQUIRE_GPU();
  for (const char* op : kSteps)
    for (DType dt : kAllDTypes) check_all(step_case(op, dt, {3, 1 << 20}));
}

TEST(StepsGpu, RmsnormStepResidualGradientAndFrozenWeight) {
  KB_REQUIRE_GPU();
  int ran = 0;
  for (double dh : {0.0, 1.0})
    for (double frozen : {0.0, 1.0})
      for (DType dt : kAllDTypes)
        for (const Shape2& s : {Shape2{1, 1}, Shape2{199, 760}, Shape2{4, 32769}}) {
          const Case c = step_case("rmsnorm_step", dt, s, 0, {{"dh", dh}, {"frozen", frozen}, {"eps", 1e-5}});
          EXPECT_EQ(registry().op(c.op).outputs(c).size(), frozen != 0 ? 3u : 4u);
          ran += check_all(c);
        }
  EXPECT_EQ(ran, 4 * 3 * 3 * kStepVariants);
}

// A copy of the step `step` with its own `wiring`, its parts taken from the registry; its
// `auto` variant is checked against the real step's oracle.
Variant rewired(const char* step, const char* forward, const char* backward,
                std::function<StepWiring(const Case&)> wiring) {
  Registry local;
  for (const char* part : {forward, backward}) {
    local.add_op(registry().op(part));
    for (const Variant* v : registry().variants(part)) local.add_variant(*v);
  }
  const std::string name = step;
  register_step(local, StepDefinition{name, "rewired", forward, backward, std::move(wiring), registry().op(name).generate,
                                      [name](const StepParts&, const Case& c, std::size_t i) {
                                        return registry().op(name).tolerance(c, i);
                                      }});
  return local.variant(name, "auto");
}

// The backward fed the step's input x where the forward's output (y, h) belongs: must fail.
TEST(StepsGpu, NegativeControlBackwardOnTheInputFails) {
  KB_REQUIRE_GPU();
  const Variant softmax_on_x = rewired("softmax_step", "softmax", "softmax_backward", [](const Case&) {
    return StepWiring{{{StepSlot::input, 0}}, {0}, {{StepSlot::input, 0}, {StepSlot::input, 1}}, {1}};
  });
  const Variant rmsnorm_on_x = rewired("rmsnorm_step", "rmsnorm", "rmsnorm_backward", [](const Case&) {
    return StepWiring{{{StepSlot::input, 0}, {StepSlot::input, 1}, {StepSlot::input, 2}},
                      {0, 1},
                      {{StepSlot::input, 0}, {StepSlot::input, 2}, {StepSlot::input, 3}, {StepSlot::input, 4}},
                      {2, 3}};
  });
  for (const auto& [step, broken] : {std::pair{"softmax_step", &softmax_on_x}, std::pair{"rmsnorm_step", &rmsnorm_on_x}})
    for (DType dt : kAllDTypes) {
      const Case c = step_case(step, dt, {199, 760});  // rmsnorm_step: dh and dw present (defaults)
      Rng rng(7);
      const PreparedCase pc = prepare_case(registry().op(step), c, rng);
      EXPECT_TRUE(check_variant(pc, registry().variant(step, "auto"), nullptr).passed) << step;
      EXPECT_FALSE(check_variant(pc, *broken, nullptr).passed) << step << " " << dtype_name(dt)
                                                               << ": a backward on x passed the check";
    }
}

}  // namespace
}  // namespace kbench
