// A small tolerance probe (3 seeds of every input kind) over every op: every variant's worst
// error within its tolerance, and every op and dtype reported with every variant the probe's
// shapes admit; and the probe as an experiment of the runner (its result file's content).
#include <set>
#include <string>
#include <utility>

#include "experiments/tolerance_probe.hpp"
#include "gpu_test.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {
namespace {

TEST(ToleranceProbeGpu, EveryShareWithinItsToleranceForEveryOpAndDtype) {
  KB_REQUIRE_GPU();
  ToleranceSettings s;
  s.seeds = 3;
  const std::vector<ProbeCase> cases = plan_tolerance_probe(s);
  const ShareTable table = run_tolerance_probe(s, cases);
  std::set<std::pair<std::string, DType>> reported;
  std::size_t checks = 0;
  for (const WorstShare& w : table.rows()) {
    EXPECT_LE(w.worst.share, 1.0) << w.worst.op << " " << dtype_name(w.worst.dtype) << " " << w.worst.variant
                                  << " inputs=" << input_kind_name(w.worst.kind) << " " << shape_string(w.worst.shape)
                                  << " seed " << w.worst.seed << ": " << w.worst.detail;
    reported.insert({w.worst.op, w.worst.dtype});
    checks += static_cast<std::size_t>(w.checks);
  }
  for (const Op& op : registry().ops())
    for (const DType dt : kAllDTypes) EXPECT_TRUE(reported.count({op.name, dt})) << op.name << " " << dtype_name(dt);
  std::size_t planned = 0;
  for (const ProbeCase& pc : cases) planned += 3 * pc.variants.size();
  EXPECT_EQ(checks, planned);
  EXPECT_TRUE(table.all_within());
}

// With --out the probe runs on the shared runner: one untimed record per op, dtype and variant,
// each op held to its own sources in the manifest, and extra.tolerance beside them.
TEST(ToleranceProbeGpu, AsAnExperimentOfTheRunner) {
  KB_REQUIRE_GPU();
  ToleranceSettings s;
  s.seeds = 1;
  s.ops = {"row_sum"};
  const std::vector<ProbeCase> cases = plan_tolerance_probe(s);
  const Result r = run_experiment(tolerance_experiment(s, cases), {"kbench_gpu_tests"});
  EXPECT_EQ(r.experiment, "tolerance");
  ASSERT_FALSE(r.records.empty());
  std::size_t checks = 0;
  for (const Record& rec : r.records) {
    EXPECT_FALSE(is_timed(rec));
    EXPECT_TRUE(rec.check.passed) << rec.variant << " " << rec.dtype << ": " << rec.check.detail;
    checks += rec.tolerance_probe.at("checks").get<std::size_t>();
  }
  std::size_t planned = 0;
  for (const ProbeCase& pc : cases) planned += pc.variants.size();
  EXPECT_EQ(checks, planned);
  bool kernel_measured = false;
  for (const auto& path : r.manifest.at("measured").at("row_sum"))
    for (const auto& prefix : registry().op("row_sum").sources)
      kernel_measured = kernel_measured || path.get<std::string>().rfind(prefix, 0) == 0;
  EXPECT_TRUE(kernel_measured);
  EXPECT_EQ(r.extra.at("tolerance").at("worst").size(), 3u);  // row_sum in each dtype
}

}  // namespace
}  // namespace kbench
