// A small tolerance probe (3 seeds of every input kind) over every op: every variant's worst
// error within its tolerance, and every op and dtype reported with every variant the probe's
// shapes admit.
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

}  // namespace
}  // namespace kbench
