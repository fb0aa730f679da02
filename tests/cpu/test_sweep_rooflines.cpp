// The same-traffic rooflines of a sweep (experiments/sweep.cpp): which stream cases it plans for
// its memory-bound cases (the op's mix at the case's bytes, once per mix and size, none for
// GEMM, copy or --no-roofline), and each record's fraction of the fastest stream that matches.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "experiments/sweep.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

std::set<std::string> stream_cases(const Experiment& e) {
  std::set<std::string> out;
  for (const MeasuredCase& mc : e.cases)
    if (mc.c.op == "stream") out.insert(case_label(mc.c));
  return out;
}

SweepSettings settings(std::vector<CaseSpec> cases) {
  SweepSettings s;
  s.cases = std::move(cases);
  s.caches = {"cold"};
  s.timers = {"graph"};
  return s;
}

TEST(SweepRooflines, EachMemoryBoundCaseGetsTheStreamOfItsMixAtItsBytes) {
  const SweepSettings s = settings({
      CaseSpec{"softmax_backward", {DType::f32, DType::f16}, {{4096, 4096}}, {}},  // 2:1
      CaseSpec{"add", {DType::f32}, {{1 << 24}}, {}},                             // 2:1, as float32 softmax_backward
      CaseSpec{"row_sum", {DType::f32}, {{1000, 1000}}, {}},                      // 1:0: 1000 x 1001 floats
      CaseSpec{"rmsnorm", {DType::bf16}, {{64, 1024}}, {}},                       // 2:2
      CaseSpec{"rmsnorm_backward", {DType::f32}, {{8, 4096}}, {}, {{"dh", 0}}},   // 2:1 without dh
      CaseSpec{"gemm", {DType::f16}, {{64, 64, 64}}, {}},                         // none
  });
  const std::set<std::string> want = {
      "stream float32 16777216 reads=2 writes=1",  // float32 softmax_backward and add
      "stream float32 8388608 reads=2 writes=1",   // float16 softmax_backward: half the bytes
      "stream float32 1001000 reads=1 writes=0",
      // bfloat16 rmsnorm: (4 x 64 + 1) x 1024 x 2 bytes in four streams of floats
      "stream float32 32896 reads=2 writes=2",
      // (2 x 8 + 1) x 4096 in, (8 + 1) x 4096 out, floats, in three streams
      "stream float32 35499 reads=2 writes=1",
  };
  EXPECT_EQ(stream_cases(sweep_experiment(s)), want);
  for (const MeasuredCase& mc : sweep_experiment(s).cases) {
    if (mc.c.op == "stream") {  // braced: EXPECT_EQ is an if-else of its own (-Wdangling-else)
      EXPECT_EQ(mc.variants.size(), registry().variants("stream").size()) << case_label(mc.c);
    }
  }

  SweepSettings off = s;
  off.roofline = false;
  EXPECT_TRUE(stream_cases(sweep_experiment(off)).empty());
  // The copy roofline itself and GEMM get none.
  EXPECT_TRUE(stream_cases(sweep_experiment(settings({CaseSpec{"gemm", {DType::f16}, {{64, 64, 64}}, {}}}))).empty());
}

Record timed(std::string op, std::string variant, std::vector<std::int64_t> shape, double bytes, double us,
             std::map<std::string, double> params = {}) {
  Record r;
  r.op = std::move(op);
  r.variant = std::move(variant);
  r.dtype = "float32";
  r.shape = std::move(shape);
  r.cache = "cold";
  r.timer = "graph";
  r.bytes = bytes;
  r.median_us = us;
  r.gbps = bytes / us / 1e3;
  r.params = std::move(params);
  r.check.passed = true;
  return r;
}

TEST(SweepRooflines, ARecordIsReadAgainstTheFastestStreamOfItsMixAndSize) {
  const Experiment e = sweep_experiment(settings({CaseSpec{"softmax_backward", {DType::f32}, {{4096, 4096}}, {}}}));
  const double bytes = 3.0 * 4096 * 4096 * 4;
  Result r;
  r.records = {timed("softmax_backward", "auto", {4096, 4096}, bytes, 50.0),
               timed("stream", "vec16", {16777216}, bytes, 45.0, {{"reads", 2}, {"writes", 1}}),
               timed("stream", "vec16_cs", {16777216}, bytes, 40.0, {{"reads", 2}, {"writes", 1}}),
               // Another mix at the same size, and the same mix at another size: neither is its roofline.
               timed("stream", "vec16", {16777216}, bytes, 20.0, {{"reads", 1}, {"writes", 1}}),
               timed("stream", "vec16", {8388608}, bytes / 2, 10.0, {{"reads", 2}, {"writes", 1}})};
  Record failed = timed("stream", "broken", {16777216}, bytes, 1.0, {{"reads", 2}, {"writes", 1}});
  failed.check.passed = false;  // a stream that failed its check is nobody's roofline
  r.records.push_back(failed);
  e.analyse(r);
  const nlohmann::json& roof = r.records[0].roofline;
  ASSERT_TRUE(roof.is_object());
  EXPECT_EQ(roof["mix"], "2:1");
  EXPECT_EQ(roof["elements"], 16777216);
  EXPECT_EQ(roof["variant"], "vec16_cs");
  EXPECT_DOUBLE_EQ(roof["fraction"].get<double>(), 40.0 / 50.0);
  for (std::size_t i = 1; i < r.records.size(); ++i) EXPECT_TRUE(r.records[i].roofline.is_null()) << i;
}

}  // namespace
}  // namespace kbench
