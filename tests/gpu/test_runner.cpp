// An experiment that is not the sweep, declared in a few lines and run by the shared runner on
// a real case: copy's two variants on 2^20 float32 elements, both timers, with an analysis of
// its own. It needs nothing from experiments/: the runner prepares, checks, times and records.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "gpu_test.hpp"
#include "harness/runner.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

TEST(Runner, RunsAnExperimentOfItsOwn) {
  KB_REQUIRE_GPU();
  const Op& copy = registry().op("copy");
  Experiment e;
  e.name = "pairs";
  e.sources = {"tests/gpu/test_runner"};
  e.how.timers = {"events", "graph"};
  e.how.visits = 2;
  e.how.samples = 2;
  MeasuredCase mc{&copy, Case{"copy", DType::f32, {1 << 20}}, {}, {}};
  for (const Variant* v : registry().variants("copy")) mc.variants.push_back(v);
  e.cases = {mc};
  e.analyse = [](Result& r) { r.extra["records_seen"] = r.records.size(); };

  const Result r = run_experiment(e, {"test"});
  const std::size_t variants = registry().variants("copy").size();
  ASSERT_EQ(r.records.size(), 2 * variants);  // every variant in both timers
  for (const Record& rec : r.records) {
    EXPECT_EQ(rec.samples_us.size(), 4u);
    EXPECT_TRUE(rec.check.passed);
    EXPECT_GT(rec.median_us, 0);
    // Every sample carries its visit's floor: an empty kernel in the record's mode, below an
    // 8 MiB copy's time (not under a sanitizer, which slows the launch more than the copy).
    ASSERT_EQ(rec.sample_floor_us.size(), rec.samples_us.size()) << rec.variant << " " << rec.timer;
    for (const double floor : rec.sample_floor_us) {
      EXPECT_GT(floor, 0) << rec.variant << " " << rec.timer;
      if (!test::under_sanitizer()) {
        EXPECT_LT(floor, rec.median_us) << rec.variant << " " << rec.timer;
      }
    }
  }
  // Pooled per cache mode and timer: cold events and cold graph, each from the two visits.
  const auto& floors = r.extra.at("visit_floors");
  ASSERT_EQ(floors.size(), 2u) << floors.dump();
  for (const auto& f : floors) {
    EXPECT_EQ(f.at("visits"), 2);
    EXPECT_EQ(f.at("samples_us").size(), 4u);
  }
  EXPECT_EQ(r.experiment, "pairs");
  EXPECT_EQ(r.extra.at("records_seen").get<std::size_t>(), r.records.size());
  EXPECT_TRUE(r.extra.at("check_failures").empty());
  EXPECT_GE(r.meta.at("seconds").at("preparation").get<double>(), 0.0);
  EXPECT_GE(r.meta.at("seconds").at("timing").get<double>(), 0.0);
  // The op's sources are measured, nothing of the sweep's (this experiment's own code lives in
  // tests/, which the manifest does not hash).
  const auto& measured = r.manifest.at("measured").at("copy");
  const auto has = [&](const std::string& prefix) {
    return std::any_of(measured.begin(), measured.end(),
                       [&](const nlohmann::json& p) { return p.get<std::string>().starts_with(prefix); });
  };
  EXPECT_TRUE(has("kernels/copy/"));
  EXPECT_FALSE(has("experiments/"));
}

// In cold graph timing every rotation set gets its own workspace (a launch on a fresh set must
// not find the last launch's scratch in L2); the launcher below is copy's vec16 that notes the
// workspace each launch was handed (the graph's capture calls it once per launch it records).
TEST(Runner, ColdGraphTimingGivesEachRotationSetItsOwnWorkspace) {
  KB_REQUIRE_GPU();
  const Op& copy = registry().op("copy");
  static std::set<void*> seen;
  seen.clear();
  Launchable noting = registry().variant("copy", "vec16");
  noting.name = "vec16_noting_its_workspace";
  noting.workspace_bytes = [](const Case&) { return std::size_t{256}; };
  const auto inner = noting.launch;
  noting.launch = [inner](const LaunchArgs& a) {
    seen.insert(a.workspace);
    inner(a);
  };
  Experiment e;
  e.name = "workspaces";
  e.sources = {"tests/gpu/test_runner"};
  e.how.caches = {"cold"};
  e.how.timers = {"graph"};
  e.how.visits = 1;
  e.how.samples = 1;
  e.cases = {MeasuredCase{&copy, Case{"copy", DType::f32, {1 << 20}}, {&noting}, {}}};  // 8 MiB a set
  const Result r = run_experiment(e, {"test"});
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_TRUE(r.records[0].check.passed);
  // The check's workspace and the primary set's, then one per rotation set: 8 MiB sets rotate
  // through 3x the L2 (60 MiB on an H200: 22 sets), one set with no rotation would see 2.
  EXPECT_GT(seen.size(), 8u);
}

}  // namespace
}  // namespace kbench
