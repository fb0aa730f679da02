// kbench compare: verdicts on results made by hand (a file against itself, a case 20% slower or
// faster, one within noise, cases in one file only), --fail-above's exit status, the refusal of
// different devices, and two committed grid runs of one device.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "cpu/run_command.hpp"
#include "record/result.hpp"
#include "report/compare_report.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using namespace kbench::test;

// A softmax record of `variant` over 5 visits of 2 samples, about `us` with a spread of 2%.
Record timed(const std::string& variant, double us, std::vector<std::int64_t> shape = {4096, 4096}) {
  Record r;
  r.op = "softmax";
  r.variant = variant;
  r.dtype = "float16";
  r.shape = std::move(shape);
  r.cache = "cold";
  r.timer = "events";
  const std::vector<double> spread = {0.99, 1.01, 1.0, 0.995, 1.005, 0.99, 1.01, 1.0, 1.002, 0.998};
  for (std::size_t i = 0; i < spread.size(); ++i) {
    r.samples_us.push_back(us * spread[i]);
    r.sample_visits.push_back(static_cast<int>(i / 2));
  }
  const Summary s = summarize(r.samples_us);
  r.median_us = s.median, r.q1_us = s.q1, r.q3_us = s.q3, r.min_us = s.min;
  r.check.passed = true;
  return r;
}

Result run_of(std::vector<Record> records, int seed = 1, const std::string& device = "NVIDIA H200") {
  Result r;
  r.experiment = "sweep";
  r.meta = {{"seed", seed}, {"started", "2026-12-01T00:00:00Z"}};
  r.device = {{"name", device}};
  r.records = std::move(records);
  return r;
}

// r with the samples and statistics of `variant` scaled by `factor`.
Result scaled(Result r, const std::string& variant, double factor) {
  for (auto& rec : r.records) {
    if (rec.variant != variant) continue;
    for (auto& s : rec.samples_us) s *= factor;
    rec.median_us *= factor, rec.q1_us *= factor, rec.q3_us *= factor, rec.min_us *= factor;
  }
  return r;
}

const Result kBase = run_of({timed("single_block", 20), timed("looped", 25), timed("split", 40, {8, 65536})});

TEST(Compare, AFileAgainstItselfIsSameEverywhere) {
  const Comparison c = compare_results(kBase, kBase);
  ASSERT_EQ(c.cases.size(), 3u);
  EXPECT_EQ(c.same, 3);
  for (const auto& k : c.cases) {
    EXPECT_EQ(k.verdict, "same");
    EXPECT_DOUBLE_EQ(k.ratio, 1.0);
    EXPECT_EQ(k.visits, 5u);  // one seed, the same visits: paired
  }
  const Comparison unpaired = compare_results(kBase, run_of(kBase.records, 2));  // another schedule
  EXPECT_EQ(unpaired.same, 3);
  for (const auto& k : unpaired.cases) {
    EXPECT_EQ(k.visits, 0u);
    EXPECT_LE(k.lo, 1.0);
    EXPECT_GE(k.hi, 1.0);
  }
}

TEST(Compare, TwentyPercentSlowerIsSlowerPairedOrNot) {
  for (int seed : {1, 2}) {
    const Comparison c = compare_results(kBase, scaled(run_of(kBase.records, seed), "looped", 1.2));
    EXPECT_EQ(c.slower, 1) << seed;
    EXPECT_EQ(c.same, 2) << seed;
    EXPECT_EQ(c.cases[1].verdict, "slower") << seed;
    EXPECT_NEAR(c.cases[1].ratio, 1.2, 1e-9);
    EXPECT_GT(c.cases[1].lo, 1.0) << seed;
    EXPECT_EQ(regressions(c, 10).size(), 1u);
    EXPECT_TRUE(regressions(c, 30).empty());
  }
}

TEST(Compare, FasterAndWithinNoise) {
  const Comparison c =
      compare_results(kBase, scaled(scaled(kBase, "single_block", 0.8), "split", 1.01));
  EXPECT_EQ(c.cases[0].verdict, "faster");
  EXPECT_EQ(c.cases[2].verdict, "same");  // 1% slower, inside the 2% band
  EXPECT_EQ(compare_results(kBase, scaled(kBase, "split", 1.01), 0.5).cases[2].verdict, "slower");
  EXPECT_TRUE(regressions(c, 0).empty());
}

TEST(Compare, CasesInOneFileOnlyAreListedNotCompared) {
  Result b = run_of({timed("single_block", 20), timed("looped", 25, {4096, 1024})});
  const Comparison c = compare_results(kBase, b);
  EXPECT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.only_a.size(), 2u);
  ASSERT_EQ(c.only_b.size(), 1u);
  const std::string md = compare_markdown({"a.json", kBase}, {"b.json", b}, c);
  EXPECT_NE(md.find("Only in B (not compared):\n\n- softmax looped 4096x1024"), std::string::npos) << md;
  EXPECT_NE(md.find("0 faster, 0 slower, 1 same; 2 only in A, 1 only in B\n"), std::string::npos) << md;
}

// Both runs' timer floors stand before the cases (a few-microsecond case moves with its run's
// floor); a run without floors has no such table.
TEST(Compare, BothRunsFloorsAreShown) {
  Result b = kBase;
  EXPECT_EQ(compare_markdown({"a.json", kBase}, {"b.json", b}, compare_results(kBase, b)).find("Timer floors"),
            std::string::npos);
  Result a = kBase;
  a.extra = {{"timer_floor", {{{"cache", "cold"}, {"timer", "graph"}, {"median_us", 0.982}}}}};
  b.extra = {{"timer_floor", {{{"cache", "cold"}, {"timer", "graph"}, {"median_us", 1.011}}}}};
  const std::string md = compare_markdown({"a.json", a}, {"b.json", b}, compare_results(a, b));
  const std::size_t floors = md.find("Timer floors"), cases = md.find("| op | variant |");
  ASSERT_NE(floors, std::string::npos) << md;
  EXPECT_LT(floors, cases) << md;
  EXPECT_NE(md.find("| a.json | cold | graph | — | — | 0.982 us |"), std::string::npos) << md;
  EXPECT_NE(md.find("| b.json | cold | graph | — | — | 1.011 us |"), std::string::npos) << md;
}

TEST(Compare, ParamsArePartOfTheCase) {
  Record with_dh = timed("looped", 25);
  with_dh.params = {{"dh", 1}};
  const Comparison c = compare_results(kBase, run_of({with_dh}));
  EXPECT_TRUE(c.cases.empty());
  EXPECT_EQ(c.only_b.size(), 1u);
}

TEST(Stats, SampleRatioOfTwoSamples) {
  const std::vector<double> a = {10, 10.1, 9.9, 10.05, 9.95};
  std::vector<double> b = a;
  for (auto& x : b) x *= 1.5;
  const PairedRatio r = sample_ratio(b, a, 1);
  EXPECT_NEAR(r.median, 1.5, 1e-12);
  EXPECT_GT(r.lo, 1.4);
  EXPECT_LT(r.hi, 1.6);
  EXPECT_EQ(r.visits, 0u);
  const PairedRatio self = sample_ratio(a, a, 1);
  EXPECT_LE(self.lo, 1.0);
  EXPECT_GE(self.hi, 1.0);
}

// The command: files written by write_result, as kbench reads them.
class CompareCommand : public ::testing::Test {
 protected:
  void SetUp() override { dir = fresh_temp_dir(); }
  void TearDown() override { fs::remove_all(dir); }
  std::string file(const std::string& name, const Result& r) {
    const fs::path path = dir / (name + ".json");
    fs::rename(write_result(r, dir / "w"), path);
    return shell_quoted(path);
  }
  fs::path dir;
};

TEST_F(CompareCommand, FailAboveTripsOnATwentyPercentRegressionOnly) {
  const std::string a = file("a", kBase), b = file("b", scaled(kBase, "looped", 1.2));
  const CommandResult self = run_kbench("compare " + a + " " + a + " --fail-above 0");
  EXPECT_EQ(self.exit_code, 0) << self.err;
  EXPECT_NE(self.out.find("0 faster, 0 slower, 3 same; 0 only in A, 0 only in B"), std::string::npos) << self.out;
  const CommandResult tripped = run_kbench("compare " + a + " " + b + " --fail-above 10");
  EXPECT_EQ(tripped.exit_code, 1) << tripped.err;
  EXPECT_EQ(line_count(tripped.err), 1) << tripped.err;
  EXPECT_NE(tripped.err.find("1 case(s) slower by more than 10%"), std::string::npos) << tripped.err;
  EXPECT_NE(tripped.out.find("| softmax | looped | 4096x4096 |"), std::string::npos) << tripped.out;
  EXPECT_NE(tripped.out.find("0 faster, 1 slower, 2 same"), std::string::npos) << tripped.out;
  EXPECT_EQ(run_kbench("compare " + a + " " + b + " --fail-above 30").exit_code, 0);
  EXPECT_EQ(run_kbench("compare " + a + " " + b).exit_code, 0);  // no --fail-above: a report only
  EXPECT_EQ(run_kbench("compare " + b + " " + a + " --fail-above 10").exit_code, 0);  // faster, not slower
  EXPECT_EQ(fs::directory_iterator(dir / "w"), fs::directory_iterator()) << "compare wrote a file";
}

TEST_F(CompareCommand, DifferentDevicesRefusedUnlessAllowed) {
  const std::string a = file("a", kBase), b = file("b", run_of(kBase.records, 1, "NVIDIA A100"));
  const CommandResult refused = run_kbench("compare " + a + " " + b);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(line_count(refused.err), 1) << refused.err;
  EXPECT_NE(refused.err.find("different devices"), std::string::npos) << refused.err;
  EXPECT_TRUE(refused.out.empty()) << refused.out;
  const CommandResult allowed = run_kbench("compare " + a + " " + b + " --allow-devices");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.out.find("3 same"), std::string::npos) << allowed.out;
}

// Two committed grid runs, one device, the same grid and seed: paired by visit (archived since,
// so read compressed).
TEST(CompareCommittedRuns, TwoGridRunsOfOneDevice) {
  const fs::path grid = fs::path(KBENCH_SOURCE_DIR) / "archive" / "grid";
  const std::string a = shell_quoted(grid / "grid-20261201T123906Z-e26341.json.gz"),
                    b = shell_quoted(grid / "grid-20261201T124113Z-6b1c87.json.gz");
  const CommandResult self = run_kbench("compare " + a + " " + a + " --fail-above 0");
  EXPECT_EQ(self.exit_code, 0) << self.err;
  EXPECT_NE(self.out.find("0 faster, 0 slower, 1243 same; 0 only in A, 0 only in B"), std::string::npos);
  const CommandResult ab = run_kbench("compare " + a + " " + b + " --fail-above 5");
  EXPECT_EQ(ab.exit_code, 0) << ab.err;
  // As docs/torch-comparison.md quotes it (the bootstrap's seed is fixed).
  EXPECT_NE(ab.out.find("0 faster, 4 slower, 1239 same; 0 only in A, 0 only in B"), std::string::npos)
      << ab.out.substr(ab.out.size() - 200);
  EXPECT_EQ(run_kbench("compare " + a + " " + b + " --fail-above 3").exit_code, 1);
  EXPECT_NE(ab.out.find("| 3 visits |"), std::string::npos);  // the grid visits each cell 3 times
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

// Issue 17's run-to-run criterion, counted per timer: of the cases above 5 us in both runs,
// how many medians agree within 1%, and which case is furthest apart.
TEST(CompareAgreement, CountsCasesAboveTheFloorWithinOnePercentPerTimer) {
  Record fast = timed("tiny", 3);  // under 5 us: not counted
  Record cupti = timed("by_cupti", 20);
  cupti.timer = "cupti";
  const Result a = run_of({timed("single_block", 20), timed("looped", 25), timed("split", 40, {8, 65536}), fast, cupti});
  // B: looped 0.5% slower, split 3% faster, the cupti record 1.5% slower, the tiny one 50% slower.
  const Result b = scaled(scaled(scaled(scaled(a, "looped", 1.005), "split", 0.97), "tiny", 1.5), "by_cupti", 1.015);
  const Comparison c = compare_results(a, b);
  const std::vector<Agreement> g = run_to_run_agreement(c);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].timer, "events");
  EXPECT_EQ(g[0].cases, 3);   // the 3 us case left out
  EXPECT_EQ(g[0].within, 2);  // single_block (equal) and looped (0.5%)
  ASSERT_TRUE(g[0].furthest);
  EXPECT_EQ(g[0].furthest->a->variant, "split");
  EXPECT_EQ(g[1].timer, "cupti");
  EXPECT_EQ(g[1].cases, 1);
  EXPECT_EQ(g[1].within, 0);
  EXPECT_EQ(run_to_run_agreement(c, 1.0, 1.0)[0].cases, 4);  // a lower floor counts the tiny case
  EXPECT_EQ(run_to_run_agreement(c, 5.0, 5.0)[0].within, 3);  // a wider band takes split in
  const std::string md = compare_markdown({"a.json", a}, {"b.json", b}, c);
  EXPECT_NE(md.find("- events: 2 of 3 (66.7%); furthest -3.00% (softmax split 8x65536 float16 cold events)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- cupti: 0 of 1 (0.0%); furthest +1.50%"), std::string::npos) << md;
}

// The pair methodology.md section 7 quotes (configs/rooflines.json twice on one H200, archived):
// kbench compare counts what it says, 126 of 129 with the graph timer and 111 of 129 with cupti.
TEST(CompareAgreement, TheCommittedRunToRunPairGivesTheMethodologysFigures) {
  const fs::path sweep = fs::path(KBENCH_SOURCE_DIR) / "archive" / "sweep";
  const CommandResult r = run_kbench("compare " + shell_quoted(sweep / "sweep-20261202T183849Z-2e1b98.json.gz") + " " +
                                     shell_quoted(sweep / "sweep-20261202T183936Z-83df3a.json.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("- graph: 126 of 129 (97.7%); furthest -1.58% (rmsnorm_backward auto 4096x4096 float16"),
            std::string::npos)
      << r.out.substr(r.out.size() - 600);
  EXPECT_NE(r.out.find("- cupti: 111 of 129 (86.0%); furthest -2.54% (stream vec16_cs 33558528 float32"),
            std::string::npos)
      << r.out.substr(r.out.size() - 600);
}

}  // namespace
}  // namespace kbench
