// kbench verify on small fixture trees (a git repository made by each test): each check must
// pass on a clean tree and fail on the one defect it exists to catch. The docs figure check is
// in test_verify_docs.cpp.
#include <gtest/gtest.h>

#include <cstdlib>

#include "record/provenance.hpp"
#include "record/result.hpp"
#include "record/sha256.hpp"
#include "record/verify.hpp"
#include "verify_fixture.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::all_problems;
using test::VerifyFixture;
using test::kHarness;
using test::kKernel;

bool says(const VerifyReport& report, const std::string& text) {
  return all_problems(report).find(text) != std::string::npos;
}

TEST(Verify, CleanTreeHasNoProblems) {
  VerifyFixture f;
  const VerifyReport report = f.verify();
  EXPECT_EQ(report.result_files, 1);
  EXPECT_EQ(report.traced_through_history, 0);
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  EXPECT_TRUE(report.notes.empty());
}

TEST(Verify, CrlfCheckoutOfTheSameSourceIsClean) {
  VerifyFixture f;
  f.tree.write("src/harness/timer.cpp", "// timer\r\n");
  const VerifyReport report = f.verify();
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  EXPECT_EQ(report.traced_through_history, 0);  // the current tree matched
}

// The kernel changed since the run: the result stays valid, its sources are at its commit.
TEST(Verify, ChangedKernelSourceIsTracedThroughHistory) {
  VerifyFixture f;
  f.tree.write("kernels/add/add.cu", "__global__ void add() { /* faster */ }\n");
  f.tree.commit("a faster add");
  const VerifyReport report = f.verify();
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  EXPECT_EQ(report.traced_through_history, 1);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("1 results traced through history"), std::string::npos);
}

// Measured at an older commit, with several commits since (the harness changed too, and the
// unmeasured file was deleted): its files are rebuilt at its own commit.
TEST(Verify, ResultMeasuredAtAnOlderCommitVerifiesThroughHistory) {
  VerifyFixture f;
  f.tree.write("src/harness/timer.cpp", "// timer, rewritten\n");
  f.tree.commit("harness");
  fs::remove(f.tree.path() / "kernels/add/add.cu");
  f.tree.write("kernels/add/add_v2.cu", "__global__ void add2() {}\n");
  f.tree.commit("add v2");
  const VerifyReport report = f.verify();
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  EXPECT_EQ(report.traced_through_history, 1);
}

// The result says it measured a version of add.cu that neither the tree nor its commit holds
// (an uncommitted edit recorded as clean): a problem naming the file, with no archive script
// in the hint.
TEST(Verify, ChangedSourceWithNoMatchingHistoryIsAProblemNamingTheFile) {
  VerifyFixture f;
  f.rewrite_result(test::add_result("__global__ void add() {} // edited, never committed\n",
                                    kHarness, f.git_clean()));
  const VerifyReport report = f.verify();
  ASSERT_EQ(report.problems.size(), 1u) << all_problems(report);
  EXPECT_EQ(report.problems[0].file, f.relative_result());
  EXPECT_NE(report.problems[0].what.find("measured file kernels/add/add.cu does not hash as "
                                         "recorded, neither in the current tree nor at commit " +
                                         f.commit.substr(0, 12)),
            std::string::npos)
      << report.problems[0].what;
  EXPECT_EQ(format_problem(report.problems[0]).find("archive_result"), std::string::npos);
}

TEST(Verify, MeasuredFileMissingEverywhereAndUnlistedOpAreProblems) {
  VerifyFixture f;
  Result r = f.result;
  r.manifest["files"]["src/harness/new.cpp"] = sha256_hex("never committed\n");
  r.manifest["measured"]["add"].push_back("src/harness/new.cpp");
  r.records[0].op = "softmax";  // its sources are not listed as measured
  f.rewrite_result(r);
  const VerifyReport report = f.verify();
  EXPECT_TRUE(says(report, "measured file src/harness/new.cpp is missing, neither in the current "
                           "tree nor at commit"))
      << all_problems(report);
  EXPECT_TRUE(says(report, "op 'softmax' has records but no manifest.measured entry"))
      << all_problems(report);
}

TEST(Verify, ResultWhoseCommitIsNotInHistoryIsAProblem) {
  VerifyFixture f;
  f.rewrite_result(test::add_result(kKernel, kHarness,
                                    {{"commit", "0123456789abcdef0123456789abcdef01234567"},
                                     {"dirty", false},
                                     {"source", "git"}}));
  EXPECT_TRUE(f.verify().problems.empty());  // the tree still matches: nothing to trace
  f.tree.write("kernels/add/add.cu", "// moved on\n");
  const VerifyReport report = f.verify();
  ASSERT_EQ(report.problems.size(), 1u) << all_problems(report);
  EXPECT_NE(report.problems[0].what.find(
                "commit 0123456789abcdef0123456789abcdef01234567 is not in this repository's "
                "history"),
            std::string::npos)
      << report.problems[0].what;
}

// Measured on a dirty tree: provenance records the diff, and verify rebuilds the measured file
// from the commit plus that diff once the tree has moved on. Without the diff it cannot.
TEST(Verify, DirtyTreeResultRebuildsFromItsDiffAndIsAProblemWithoutIt) {
  VerifyFixture f;
  const std::string edited = "__global__ void add() { /* uncommitted */ }\n";
  f.tree.write("kernels/add/add.cu", edited);
  const json git = provenance(f.tree.path())["git"];
  ASSERT_TRUE(git["dirty"]) << git;
  ASSERT_TRUE(git.contains("diff")) << git;
  f.rewrite_result(test::add_result(edited, kHarness, git));
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
  f.tree.write("kernels/add/add.cu", kKernel);  // the edit is gone from the tree
  VerifyReport report = f.verify();
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  EXPECT_EQ(report.traced_through_history, 1);

  json without_diff = git;
  without_diff.erase("diff");
  without_diff.erase("diff_sha256");
  f.rewrite_result(test::add_result(edited, kHarness, without_diff));
  report = f.verify();
  ASSERT_EQ(report.problems.size(), 1u) << all_problems(report);
  EXPECT_NE(report.problems[0].what.find("records no diff, so its sources cannot be rebuilt"),
            std::string::npos)
      << report.problems[0].what;

  json edited_diff = git;
  std::string diff = edited_diff["diff"];
  diff.replace(diff.find("uncommitted"), 11, "Uncommitted");
  edited_diff["diff"] = diff;
  f.rewrite_result(test::add_result(edited, kHarness, edited_diff));
  EXPECT_TRUE(says(f.verify(), "meta.git.diff does not hash as meta.git.diff_sha256"))
      << all_problems(f.verify());
}

// Dirty elsewhere: the tree's changes did not touch the measured files, so the commit alone
// holds them and the result traces without a diff (older files recorded none).
TEST(Verify, DirtyResultWithoutDiffTracesWhenItsMeasuredFilesAreTheCommits) {
  VerifyFixture f;
  json git = f.git_clean();
  git["dirty"] = true;
  f.rewrite_result(test::add_result(kKernel, kHarness, git));
  f.tree.write("kernels/add/add.cu", "// moved on\n");
  const VerifyReport report = f.verify();
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  EXPECT_EQ(report.traced_through_history, 1);
}

TEST(Verify, EditedRawSampleBreaksTheDigestAndTheStatistics) {
  VerifyFixture f;
  json j = f.result_json();
  j["records"][0]["samples_us"][0] = 11.0;
  f.write_result_json(j);
  const VerifyReport report = f.verify();
  EXPECT_TRUE(says(report, "its records do not match integrity.records")) << all_problems(report);
  EXPECT_TRUE(says(report, "median_us is 12.345000000000001, but its samples_us give 11"))
      << all_problems(report);
}

// A file from before the digest: the statistics still hold its summary to its samples, within
// a relative 1e-12 (another tool's order of operations), and no further.
TEST(Verify, StatisticsMustBeThoseOfTheSamplesEvenWithoutADigest) {
  VerifyFixture f;
  json j = f.result_json();
  j.erase("integrity");
  j["records"][0]["samples_us"] = {1.0, 2.0, 3.0, 4.0, 5.0};
  j["records"][0]["median_us"] = 3.0;
  j["records"][0]["q1_us"] = 2.0 * (1 + 4e-16);  // last-bit difference: the same statistic
  j["records"][0]["q3_us"] = 4.0;
  j["records"][0]["min_us"] = 1.0;
  f.write_result_json(j);
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
  j["records"][0]["q3_us"] = 4.0 * (1 + 1e-9);
  j["records"][0]["min_us"] = 0.5;
  f.write_result_json(j);
  const VerifyReport report = f.verify();
  ASSERT_EQ(report.problems.size(), 2u) << all_problems(report);
  EXPECT_NE(report.problems[0].what.find("q3_us is"), std::string::npos);
  EXPECT_NE(report.problems[1].what.find("min_us is 0.5, but its samples_us give 1"),
            std::string::npos);
}

// A record that was checked, not timed (the tolerance probe's): no samples, statistics 0.
TEST(Verify, UntimedRecordHasNoSamplesAndZeroStatistics) {
  VerifyFixture f;
  Result r = f.result;
  Record& rec = r.records[0];
  rec.cache = rec.timer = kUntimed;
  rec.samples_us.clear();
  rec.median_us = rec.q1_us = rec.q3_us = rec.min_us = rec.gbps = 0;
  f.rewrite_result(r);
  EXPECT_TRUE(f.verify().problems.empty()) << all_problems(f.verify());
  json j = f.result_json();
  j.erase("integrity");  // the statistics alone, not the digest
  j["records"][0]["median_us"] = 3.0;
  f.write_result_json(j);
  EXPECT_TRUE(says(f.verify(), "is untimed (timer \"none\") but has samples_us or a nonzero median"))
      << all_problems(f.verify());
}

TEST(Verify, InvalidResultFileIsAProblem) {
  VerifyFixture f;
  f.tree.write("results/sweep/truncated.json", "{\"schema\": \"kbench/result/v1\"");
  f.tree.write("results/sweep/.x.partial", "ignored: not a .json file");
  const VerifyReport report = f.verify();
  EXPECT_EQ(report.result_files, 2);
  ASSERT_EQ(report.problems.size(), 1u) << all_problems(report);
  EXPECT_EQ(report.problems[0].file, "results/sweep/truncated.json");
}

// A superseded result moves to archive/<experiment>/ and is checked like a current one.
TEST(Verify, ArchivedResultIsTracedThroughHistoryToo) {
  VerifyFixture f;
  f.archive();
  f.tree.write("kernels/add/add.cu", "// rewritten since\n");
  VerifyReport report = f.verify();
  EXPECT_EQ(report.result_files, 1);
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  EXPECT_EQ(report.traced_through_history, 1);

  json j = f.result_json();
  j["records"][0]["samples_us"][0] = 12.5;
  f.write_result_json(j);
  EXPECT_TRUE(says(f.verify(), "its records do not match integrity.records"));
}

// archive/ keeps results gzip-compressed as well: checked as the JSON they hold.
TEST(Verify, CompressedArchivedResultIsCheckedToo) {
  VerifyFixture f;
  f.archive();
  ASSERT_EQ(test::run_command("gzip -9 -n " + test::shell_quoted(f.result_file)).exit_code, 0);
  VerifyReport report = f.verify();
  EXPECT_EQ(report.result_files, 1);
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  f.tree.write("archive/sweep/damaged.json.gz", "not gzip");
  EXPECT_TRUE(says(f.verify(), "not a valid gzip file"));
}

TEST(Verify, ArchiveHoldsOnlyResultJsonUnderItsExperiment) {
  VerifyFixture f;
  f.tree.write("archive/sweep/README.md", "notes belong in docs/records/\n");
  f.tree.write("archive/2025-01-01-old/kernels/add/add.cu", kKernel);  // a copied source
  const fs::path old_layout = f.tree.path() / "archive/2025-01-01-old/results/sweep/x.json";
  fs::create_directories(old_layout.parent_path());
  fs::copy_file(f.result_file, old_layout);
  const VerifyReport report = f.verify();
  ASSERT_EQ(report.problems.size(), 3u) << all_problems(report);
  EXPECT_EQ(report.problems[0].file, "archive/2025-01-01-old/kernels/add/add.cu");
  EXPECT_NE(report.problems[0].what.find("archive/ holds only result JSON"), std::string::npos);
  EXPECT_EQ(report.problems[1].file, "archive/2025-01-01-old/results/sweep/x.json");
  EXPECT_NE(report.problems[1].what.find("belongs in archive/sweep/"), std::string::npos);
  EXPECT_EQ(report.problems[2].file, "archive/sweep/README.md");
}

// No history at all (a copy without .git): one line says how many results cannot be traced
// and why; it is not a problem, and the results that match the tree are still checked.
TEST(Verify, WithoutHistoryOneLineNamesTheUntraceableAndCurrentResultsAreStillChecked) {
  VerifyFixture f;
  f.tree.write("kernels/add/add.cu", "// moved on\n");
  test::write_result_in(f.tree.path(), test::add_result("// moved on\n", kHarness, f.git_clean()));
  f.drop_history();
  VerifyReport report = f.verify();
  EXPECT_EQ(report.result_files, 2);
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("1 result cannot be traced through history: this tree is not "
                                 "a git checkout."),
            std::string::npos)
      << report.notes[0];

  // The current one is still held to its digest.
  json j = f.result_json();
  j["records"][0]["median_us"] = 1.0;
  f.write_result_json(j);
  report = f.verify();
  EXPECT_TRUE(says(report, "its records do not match integrity.records")) << all_problems(report);
  EXPECT_EQ(report.notes.size(), 1u);
}

// A shallow clone holds only its tip: a result from before it cannot be traced, and says so.
TEST(Verify, ShallowCloneWithoutTheCommitCannotTraceIt) {
  VerifyFixture f;
  f.tree.write("kernels/add/add.cu", "// moved on\n");
  f.tree.commit("moved on");
  test::TempDir clone_parent;
  const fs::path clone = clone_parent.path() / "clone";
  f.tree.git({"clone", "-q", "--depth", "1", "file://" + f.tree.path().string(), clone.string()});
  ASSERT_TRUE(fs::exists(clone / f.relative_result()));  // committed with the sources
  const VerifyReport report = verify_tree({clone, {}});
  EXPECT_TRUE(report.problems.empty()) << all_problems(report);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("shallow clone"), std::string::npos) << report.notes[0];
}

// kbench with `args`: its exit status, and its stdout in `out` when given.
int run_kbench(const std::string& args, std::string* out = nullptr) {
  test::TempDir dir;
  const std::string capture = (dir.path() / "out").string();
  const int status = std::system(
      (std::string(KBENCH_BINARY) + " " + args + " >'" + capture + "' 2>/dev/null").c_str());
  if (out) *out = test::read_file(capture);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(VerifyCommand, ExitStatusSaysCleanProblemsOrBadInput) {
  VerifyFixture f;
  const std::string root = "--root '" + f.tree.path().string() + "'";
  EXPECT_EQ(run_kbench("verify " + root), 0);
  f.tree.write("README.md", "5.5 us\n");
  EXPECT_EQ(run_kbench("verify " + root), 1);
  EXPECT_EQ(run_kbench("verify --root /nonexistent/kbench"), 2);
  // An existing folder that is not a kbench tree is bad input, not a clean tree.
  test::TempDir empty;
  EXPECT_EQ(run_kbench("verify --root '" + empty.path().string() + "'"), 2);
}

TEST(VerifyCommand, UntraceableLineIsPrintedButIsNotAFailure) {
  VerifyFixture f;
  f.tree.write("kernels/add/add.cu", "// moved on\n");
  f.drop_history();
  std::string out;
  EXPECT_EQ(run_kbench("verify --root '" + f.tree.path().string() + "'", &out), 0) << out;
  EXPECT_NE(out.find("verify: 1 result cannot be traced through history: this tree is not a git "
                     "checkout."),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("verify: 1 result files, 0 problems"), std::string::npos) << out;
}

}  // namespace
}  // namespace kbench
