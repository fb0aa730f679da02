// kbench verify on small fixture trees: each check must pass on a clean tree and fail on the
// one defect it exists to catch.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "record/result.hpp"
#include "record/sha256.hpp"
#include "record/verify.hpp"
#include "record_temp_dir.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

const char* kKernel = "__global__ void add() {}\n";
const char* kHarness = "// timer\n";

// A tree with two sources and one result measuring them: add at 12.345 us and 1234.5 GB/s.
struct Fixture {
  test::TempDir tree;
  fs::path result_file;
  Result result;  // what result_file holds

  Fixture() {
    tree.write("CMakeLists.txt", "project(x)\n");
    tree.write("kernels/add/add.cu", kKernel);
    tree.write("src/harness/timer.cpp", kHarness);
    Result r;
    r.experiment = "sweep";
    r.manifest = {{"algorithm", "sha256"},
                  {"files",
                   {{"kernels/add/add.cu", sha256_hex(kKernel)},
                    {"src/harness/timer.cpp", sha256_hex(kHarness)},
                    {"src/unmeasured.cpp", "not checked: not measured"}}},
                  {"measured", {{"add", {"kernels/add/add.cu", "src/harness/timer.cpp"}}}}};
    Record rec;
    rec.op = "add";
    rec.variant = "vec16";
    rec.dtype = "float32";
    rec.shape = {1024, 1024};
    rec.cache = "cold";
    rec.timer = "events";
    rec.samples_us = {12.345};
    rec.median_us = rec.q1_us = rec.q3_us = rec.min_us = 12.345;
    rec.gbps = 1234.5;
    r.records = {rec};
    r.extra = {{"timer_floor", {{{"cache", "cold"}, {"timer", "events"}, {"median_us", 2.976}}}}};
    result_file = write_result(r, tree.path() / "results" / "sweep");
    result = r;
  }

  VerifyReport verify() const { return verify_tree({tree.path(), {}}); }

  std::string relative_result() const {
    return result_file.lexically_relative(tree.path()).generic_string();
  }

  // Moves the result into archive/<entry>/ beside copies of its sources, as
  // scripts/archive_result.sh does.
  void archive(const std::string& entry) {
    const fs::path dest = tree.path() / "archive" / entry;
    fs::create_directories(dest / "results" / "sweep");
    fs::rename(result_file, dest / relative_result());
    result_file = dest / relative_result();
    tree.write("archive/" + entry + "/kernels/add/add.cu", kKernel);
    tree.write("archive/" + entry + "/src/harness/timer.cpp", kHarness);
  }
};

std::string all_problems(const VerifyReport& report) {
  std::string text;
  for (const auto& p : report.problems) text += format_problem(p) + "\n";
  return text;
}

TEST(Verify, CleanTreeHasNoProblems) {
  Fixture f;
  const VerifyReport report = f.verify();
  EXPECT_EQ(report.result_files, 1);
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
}

TEST(Verify, ChangedSourceByteIsAProblemNamingTheFile) {
  Fixture f;
  f.tree.write("kernels/add/add.cu", "__global__ void add() {} \n");
  const VerifyReport report = f.verify();
  ASSERT_EQ(report.problems.size(), 1u) << all_problems(report);
  EXPECT_EQ(report.problems[0].file, f.relative_result());
  EXPECT_NE(report.problems[0].what.find("kernels/add/add.cu changed"), std::string::npos);
  EXPECT_NE(report.problems[0].fix.find("scripts/archive_result.sh " + f.relative_result()),
            std::string::npos);
}

TEST(Verify, CrlfCheckoutOfTheSameSourceIsClean) {
  Fixture f;
  f.tree.write("src/harness/timer.cpp", "// timer\r\n");
  EXPECT_TRUE(f.verify().problems.empty());
}

TEST(Verify, MissingSourceAndUnlistedOpAreProblems) {
  Fixture f;
  fs::remove(f.tree.path() / "src/harness/timer.cpp");
  nlohmann::json j = to_json(read_result(f.result_file));
  j["records"][0]["op"] = "softmax";  // its sources are not listed as measured
  f.tree.write(f.relative_result(), j.dump());
  const std::string text = all_problems(f.verify());
  EXPECT_NE(text.find("src/harness/timer.cpp is missing"), std::string::npos) << text;
  EXPECT_NE(text.find("op 'softmax' has records but no manifest.measured entry"), std::string::npos)
      << text;
}

TEST(Verify, InvalidResultFileIsAProblem) {
  Fixture f;
  f.tree.write("results/sweep/truncated.json", "{\"schema\": \"kbench/result/v1\"");
  f.tree.write("results/sweep/.x.partial", "ignored: not a .json file");
  const VerifyReport report = f.verify();
  EXPECT_EQ(report.result_files, 2);
  ASSERT_EQ(report.problems.size(), 1u) << all_problems(report);
  EXPECT_EQ(report.problems[0].file, "results/sweep/truncated.json");
}

TEST(Verify, ArchivedResultWithItsSourcesIsClean) {
  Fixture f;
  f.archive("2025-01-01-old-add");
  f.tree.write("kernels/add/add.cu", "// rewritten since\n");  // the live tree moved on
  VerifyReport report = f.verify();
  EXPECT_EQ(report.result_files, 1);
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);

  f.tree.write("archive/2025-01-01-old-add/kernels/add/add.cu", "// edited copy\n");
  report = f.verify();
  ASSERT_EQ(report.problems.size(), 1u) << all_problems(report);
  EXPECT_NE(report.problems[0].what.find("archive/2025-01-01-old-add/kernels/add/add.cu changed"),
            std::string::npos);
}

TEST(Verify, DocsFigureMustMatchASavedMedianAtItsPrecision) {
  Fixture f;
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
TEST(Verify, TimerFloorIsATraceableFigure) {
  Fixture f;
  f.tree.write("README.md", "an empty kernel reads 2.976 us with the events timer\n");
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
  f.tree.write("README.md", "an empty kernel reads 2.977 us with the events timer\n");
  EXPECT_EQ(f.verify().problems.size(), 1u) << all_problems(f.verify());
}

// The floors taken before the visits and before preparation (extra.timer_floor_before,
// extra.timer_floor_start) are as traceable as the one after.
TEST(Verify, TimerFloorsBeforeTheVisitsAreTraceableToo) {
  Fixture f;
  f.tree.write("README.md", "the graph floor was 0.512 us at the start and 0.685 us before the visits\n");
  EXPECT_EQ(f.verify().problems.size(), 2u) << all_problems(f.verify());
  Result with_both = f.result;
  with_both.extra["timer_floor_before"] = {{{"cache", "cold"}, {"timer", "graph"}, {"median_us", 0.685}}};
  with_both.extra["timer_floor_start"] = {{{"cache", "cold"}, {"timer", "graph"}, {"median_us", 0.512}}};
  fs::remove(f.result_file);
  write_result(with_both, f.tree.path() / "results" / "sweep");
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
}

// A line that names ops, dtypes, shapes, timers or caches matches only figures of records
// that agree: 12.345 us is add's float32 1024x1024 cold events median, not softmax's or
// graph's, and a timer floor has no op or shape to disagree with.
TEST(Verify, DocsFigureMustAgreeWithWhatItsLineNames) {
  Fixture f;
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

TEST(Verify, ArchivedFigureCountsOnlyOnALineLinkingTheArchive) {
  Fixture f;
  f.archive("old");
  f.tree.write("docs/history.md", "It took 12.3 us.\n");
  EXPECT_EQ(f.verify().problems.size(), 1u);
  f.tree.write("docs/history.md", "It took 12.3 us ([old run](../archive/old/results/sweep/)).\n");
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
}

int run_kbench(const std::string& args) {
  const int status =
      std::system((std::string(KBENCH_BINARY) + " " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(VerifyCommand, ExitStatusSaysCleanProblemsOrBadInput) {
  Fixture f;
  const std::string root = "--root '" + f.tree.path().string() + "'";
  EXPECT_EQ(run_kbench("verify " + root), 0);
  f.tree.write("README.md", "5.5 us\n");
  EXPECT_EQ(run_kbench("verify " + root), 1);
  EXPECT_EQ(run_kbench("verify --root /nonexistent/kbench"), 2);
  // An existing folder that is not a kbench tree is bad input, not a clean tree.
  test::TempDir empty;
  EXPECT_EQ(run_kbench("verify --root '" + empty.path().string() + "'"), 2);
}

}  // namespace
}  // namespace kbench
