// The docs half of kbench verify: every figure quoted in README.md and docs/**/*.md must match a
// saved figure of a record that agrees with what its line names; an archived result's figure
// only in a paragraph that cites its file; docs/records/ (scratch logs) is not checked.
#include <gtest/gtest.h>

#include "record/verify.hpp"
#include "verify_fixture.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using test::all_problems;
using test::VerifyFixture;

TEST(VerifyDocs, DocsFigureMustMatchASavedMedianAtItsPrecision) {
  VerifyFixture f;
  f.tree.write("README.md",
               "add takes 12.3 us (12.35 us, 12 µs) at 1234 GB/s, 1.23 TB/s, 1.2 TB/s.\n"
               "```\nexample output: 99.9 us\n```\n"
               "The H200 peak is 4.8 TB/s. <!-- verify:ignore -->\n");
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());

  f.tree.write("docs/methodology/timers.md", "intro\n\nadd takes 12.31 us and moves 1,300 GB/s\n");
  const VerifyReport report = f.verify();
  ASSERT_EQ(report.problems.size(), 2u) << all_problems(report);
  EXPECT_EQ(report.problems[0].file, "docs/methodology/timers.md:3");
  EXPECT_NE(report.problems[0].what.find("quotes 12.31 us"), std::string::npos);
  EXPECT_NE(report.problems[1].what.find("quotes 1,300 GB/s"), std::string::npos);
}

// A timer's floor (extra.timer_floor) is a saved median too; other numbers in extra are not.
TEST(VerifyDocs, TimerFloorIsATraceableFigure) {
  VerifyFixture f;
  f.tree.write("README.md", "an empty kernel reads 2.976 us with the events timer\n");
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
  f.tree.write("README.md", "an empty kernel reads 2.977 us with the events timer\n");
  EXPECT_EQ(f.verify().problems.size(), 1u) << all_problems(f.verify());
}

// The floors taken before the visits and before preparation (extra.timer_floor_before,
// extra.timer_floor_start) are as traceable as the one after.
TEST(VerifyDocs, TimerFloorsBeforeTheVisitsAreTraceableToo) {
  VerifyFixture f;
  f.tree.write("README.md", "the graph floor was 0.512 us at the start and 0.685 us before the visits\n");
  EXPECT_EQ(f.verify().problems.size(), 2u) << all_problems(f.verify());
  Result with_both = f.result;
  with_both.extra["timer_floor_before"] = {{{"cache", "cold"}, {"timer", "graph"}, {"median_us", 0.685}}};
  with_both.extra["timer_floor_start"] = {{{"cache", "cold"}, {"timer", "graph"}, {"median_us", 0.512}}};
  f.rewrite_result(with_both);
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
}

// And so is the median of the floors taken in every visit (extra.visit_floors); the range of
// the visits' medians beside it is not a saved median.
TEST(VerifyDocs, TheFloorsOfTheVisitsAreTraceableToo) {
  VerifyFixture f;
  f.tree.write("README.md", "in the visits the graph floor was 0.597 us (0.588 us to 0.611 us)\n");
  EXPECT_EQ(f.verify().problems.size(), 3u) << all_problems(f.verify());
  Result with_visits = f.result;
  with_visits.extra["visit_floors"] = {
      {{"cache", "cold"}, {"timer", "graph"}, {"median_us", 0.597}, {"visit_median_range_us", {0.588, 0.611}}}};
  f.rewrite_result(with_visits);
  EXPECT_EQ(f.verify().problems.size(), 2u) << all_problems(f.verify());
}

// A line that names ops, dtypes, shapes, timers or caches matches only figures of records
// that agree: 12.345 us is add's float32 1024x1024 cold events median, not softmax's or
// graph's, and a timer floor has no op or shape to disagree with.
TEST(VerifyDocs, DocsFigureMustAgreeWithWhatItsLineNames) {
  VerifyFixture f;
  f.tree.write("README.md",
               "| add | 1024x1024 | float32 | cold | events | 12.345 us | 1234.5 GB/s |\n"
               "add at 1024x1024: 12.35 us. The events floor is 2.976 us for softmax too.\n"
               "row sum (two words, no op) takes 12.3 us\n");
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());

  f.tree.write("README.md",
               "| add | 1024x1024 | float16 | cold | events | 12.345 us |\n"
               "| add | 2048x1024 | float32 | cold | events | 12.345 us |\n"
               "| add | 1024x1024 | float32 | warm | events | 12.345 us |\n"
               "add in graph mode: 12.345 us\n"
               "the empty kernel with graph replay: 2.976 us\n");
  // "softmax" names an op only once a saved record has it; this tree has only add.
  const VerifyReport report = f.verify();
  ASSERT_EQ(report.problems.size(), 5u) << all_problems(report);
  EXPECT_NE(report.problems[0].what.find("for what the line names (op add, dtype float16, "
                                         "shape 1024x1024, cache cold, timer events)"),
            std::string::npos)
      << report.problems[0].what;
  EXPECT_NE(report.problems[3].what.find("(op add, timer graph)"), std::string::npos);
}

TEST(VerifyDocs, ArchivedFigureCountsOnlyWhereALinkCitesItsFile) {
  VerifyFixture f;
  f.archive();
  const std::string file = f.result_file.filename().string();
  f.tree.write("docs/history.md", "It took 12.3 us.\n");
  EXPECT_EQ(f.verify().problems.size(), 1u);
  // The folder, or another archived file, is not the result the figure comes from.
  f.tree.write("docs/history.md", "It took 12.3 us ([old runs](../archive/sweep/)).\n"
                                  "It took 12.3 us ([old run](../archive/sweep/other.json)).\n");
  EXPECT_EQ(f.verify().problems.size(), 2u) << all_problems(f.verify());
  f.tree.write("docs/history.md", "It took 12.3 us ([old run](../archive/sweep/" + file + ")).\n");
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
  // Resolved from the doc's own folder, anchors ignored.
  f.tree.write("docs/deep/history.md",
               "It took 12.3 us ([old run](<../../archive/sweep/" + file + "#records>)).\n");
  f.tree.write("README.md", "It took 12.3 us ([old run](archive/sweep/" + file + ")).\n");
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
  f.tree.write("docs/deep/history.md", "It took 12.3 us ([old run](../archive/sweep/" + file + ")).\n");
  EXPECT_EQ(f.verify().problems.size(), 1u) << all_problems(f.verify());
}

// A paragraph that cites an archived file, by a link or as a root path in code, covers the
// figures of all its lines; a table or a list also by the sentence that introduces it. Another
// paragraph, or a table after an unrelated sentence, does not.
TEST(VerifyDocs, ArchivedFigureCountsInTheParagraphThatCitesItsFile) {
  VerifyFixture f;
  f.archive();
  const std::string code = "`archive/sweep/" + f.result_file.filename().string() + "`";
  f.tree.write("docs/history.md", "The old run (" + code + ")\ntook 12.3 us.\n\n"
               "Measured in " + code + ":\n\n| add | 12.35 us |\n|---|---|\n| add | 12.3 us |\n\n"
               "Measured in " + code + ":\n- add took 12.3 us\n");
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());

  f.tree.write("docs/history.md", "The old run (" + code + ").\n\nIt took 12.3 us.\n\n"
               "Measured then:\n\n| add | 12.3 us |\n\n"
               "Not `archive/sweep/other.json.gz` nor `docs/" + code.substr(1) + ": 12.3 us\n");
  const VerifyReport report = f.verify();
  ASSERT_EQ(report.problems.size(), 3u) << all_problems(report);
  EXPECT_EQ(report.problems[0].file, "docs/history.md:3");
  EXPECT_EQ(report.problems[1].file, "docs/history.md:7");
  EXPECT_EQ(report.problems[2].file, "docs/history.md:9");
}

// Notes of scratch work quote scratch runs, which are not results.
TEST(VerifyDocs, RecordsNotesAreNotChecked) {
  VerifyFixture f;
  f.tree.write("docs/records/2026-01-01-probe/README.md", "the probe read 99.99 us\n");
  f.tree.write("docs/records.md", "the probe read 99.99 us\n");
  const VerifyReport report = f.verify();
  ASSERT_EQ(report.problems.size(), 1u) << all_problems(report);
  EXPECT_EQ(report.problems[0].file, "docs/records.md:1");
}

}  // namespace
}  // namespace kbench
