// Provenance: the commit a run's sources are at, and the exact diff when they are not that
// commit. A tree reads clean only when git compared it and found nothing; the marker file
// names a commit but never vouches for the tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/text.hpp"
#include "cpu/run_command.hpp"
#include "git_fixture.hpp"
#include "record/git_history.hpp"
#include "record/provenance.hpp"
#include "record/sha256.hpp"
#include "record_temp_dir.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json git_of(const fs::path& root) { return provenance(root).at("git"); }

TEST(Provenance, WithoutGitTheCommitFileNamesTheCommitButNotACleanTree) {
  test::TempDir tree;
  json git = git_of(tree.path());
  EXPECT_EQ(git["commit"], "unknown");
  EXPECT_EQ(git["source"], "none");
  EXPECT_TRUE(git["dirty"]);
  tree.write(".kbench-git-commit", "0123abcd\nsecond line\n");
  const json p = provenance(tree.path());
  git = p["git"];
  EXPECT_EQ(git["commit"], "0123abcd");
  EXPECT_EQ(git["source"], ".kbench-git-commit");
  EXPECT_TRUE(git["dirty"]);  // nothing compared the files with 0123abcd
  EXPECT_NE(git.value("compare_error", "").find("not a git checkout"), std::string::npos) << git;
  EXPECT_FALSE(git.contains("diff"));
  EXPECT_FALSE(p["host"].get<std::string>().empty());
}

TEST(Provenance, CleanTreeAtHeadAndOutputsOutsideTheScope) {
  test::GitFixture repo;
  repo.write("kernels/a.cu", "a\n");
  repo.write("docs/notes.md", "notes\n");
  const std::string head = repo.commit();
  json git = git_of(repo.path());
  EXPECT_EQ(git["source"], "git");
  EXPECT_EQ(git["commit"], head);
  EXPECT_FALSE(git["dirty"]) << git;
  EXPECT_EQ(git["changed"], json::array());
  EXPECT_FALSE(git.contains("diff"));
  // New results, archived results and docs are not sources.
  repo.write("results/sweep/x.json", "{}");
  repo.write("archive/sweep/y.json", "{}");
  repo.write("docs/notes.md", "edited\n");
  EXPECT_FALSE(git_of(repo.path())["dirty"]);
}

TEST(Provenance, ChangedTreeRecordsItsDiffAndLeavesTheRealIndexAlone) {
  test::GitFixture repo;
  repo.write("kernels/a.cu", "a\n");
  repo.write("cmake/x.cmake", "x\n");
  const std::string head = repo.commit();
  const std::string index_before = test::read_file(repo.path() / ".git" / "index");
  repo.write("kernels/a.cu", "b\n");
  repo.write("src/new.cpp", "new\n");
  fs::remove_all(repo.path() / "cmake");  // a deleted folder must show too
  const json git = git_of(repo.path());
  EXPECT_EQ(git["commit"], head);
  EXPECT_TRUE(git["dirty"]);
  EXPECT_EQ(git["changed"], json({"cmake/x.cmake", "kernels/a.cu", "src/new.cpp"}));
  const std::string diff = git["diff"];
  EXPECT_NE(diff.find("+b"), std::string::npos) << diff;
  EXPECT_EQ(git["diff_sha256"], sha256_hex(diff));
  EXPECT_EQ(test::read_file(repo.path() / ".git" / "index"), index_before);
  EXPECT_FALSE(fs::exists(repo.path() / ".git" / "index.lock"));
  // The real index still sees nothing staged.
  EXPECT_EQ(repo.git({"diff", "--cached", "--name-only"}), "");
}

// The GPU machine's copy: the files of commit C (plus an edit) over a .git whose HEAD is an
// older commit, with C's objects fetched from a bundle. The marker names C; the tree is compared
// with C and the diff rebuilds the edited file from C.
TEST(Provenance, MarkerCommitWithAChangedFileGivesADiffThatRebuildsIt) {
  test::GitFixture repo;
  repo.write("kernels/a.cu", "old\n");
  const std::string old_head = repo.commit("old");
  repo.write("kernels/a.cu", "at C\n");
  repo.write("src/core/b.cpp", "b\n");
  const std::string c = repo.commit("C");
  repo.git({"update-ref", "refs/kbench/bundle", c});
  repo.git({"reset", "-q", "--soft", old_head});  // HEAD back at the older commit
  repo.write(".kbench-git-commit", c + "\n");
  repo.write("kernels/a.cu", "edited after C\n");

  json git = git_of(repo.path());
  EXPECT_EQ(git["source"], ".kbench-git-commit");
  EXPECT_EQ(git["commit"], c);
  EXPECT_EQ(git["git_head"], old_head);
  EXPECT_TRUE(git["git_dirty"]);
  EXPECT_TRUE(git["dirty"]);
  EXPECT_EQ(git["changed"], json({"kernels/a.cu"}));
  const GitRepo history(repo.path());
  const auto at_c = history.read_files(c, {"kernels/a.cu", "src/core/b.cpp"});
  ASSERT_TRUE(at_c);
  EXPECT_EQ(at_c->at("kernels/a.cu"), "at C\n");
  const RebuiltFiles rebuilt =
      apply_diff(*at_c, git["diff"].get<std::string>(), {"kernels/a.cu", "src/core/b.cpp"});
  ASSERT_EQ(rebuilt.error, "");
  EXPECT_EQ(rebuilt.files.at("kernels/a.cu"), "edited after C\n");
  EXPECT_EQ(rebuilt.files.at("src/core/b.cpp"), "b\n");

  // The same copy without the edit is exactly C: clean, although git's HEAD sees it dirty.
  repo.write("kernels/a.cu", "at C\n");
  git = git_of(repo.path());
  EXPECT_EQ(git["commit"], c);
  EXPECT_FALSE(git["dirty"]) << git;
  EXPECT_FALSE(git.contains("diff"));
  EXPECT_TRUE(git["git_dirty"]);
}

// A marker whose commit this repository does not have (no bundle fetched): the tree cannot be
// compared, so it is dirty, with the reason and no diff.
TEST(Provenance, MarkerCommitWithoutItsObjectsIsDirtyWithTheReason) {
  test::GitFixture repo;
  repo.write("kernels/a.cu", "a\n");
  const std::string head = repo.commit();
  const std::string missing = "feedfacefeedfacefeedfacefeedfacefeedface";
  repo.write(".kbench-git-commit", missing + "\n");
  const json git = git_of(repo.path());
  EXPECT_EQ(git["commit"], missing);
  EXPECT_EQ(git["source"], ".kbench-git-commit");
  EXPECT_TRUE(git["dirty"]);
  EXPECT_NE(git.value("compare_error", "").find("not in this repository"), std::string::npos)
      << git;
  EXPECT_FALSE(git.contains("diff"));
  EXPECT_EQ(git["git_head"], head);
  EXPECT_FALSE(git["git_dirty"]);  // the tree is exactly HEAD
}

// A marker that names HEAD is not another commit: git's own view stands.
TEST(Provenance, MarkerNamingHeadLeavesGitAsTheSource) {
  test::GitFixture repo;
  repo.write("kernels/a.cu", "a\n");
  const std::string head = repo.commit();
  repo.write(".kbench-git-commit", head.substr(0, 12) + "\n");
  const json git = git_of(repo.path());
  EXPECT_EQ(git["source"], "git");
  EXPECT_EQ(git["commit"], head);
  EXPECT_FALSE(git["dirty"]);
  EXPECT_FALSE(git.contains("git_head"));
}

// `git init` without a commit (the GPU machine's tree without .git, before the bundle's commit
// is known): the marker is the base; with its objects missing the tree is not clean.
TEST(Provenance, RepositoryWithoutHeadUsesTheMarker) {
  test::GitFixture repo;
  repo.write("kernels/a.cu", "a\n");
  json git = git_of(repo.path());
  EXPECT_EQ(git["source"], "none");
  EXPECT_TRUE(git["dirty"]);
  repo.write(".kbench-git-commit", "0123abcd\n");
  git = git_of(repo.path());
  EXPECT_EQ(git["source"], ".kbench-git-commit");
  EXPECT_TRUE(git["dirty"]);
  EXPECT_FALSE(git.contains("git_head"));
  EXPECT_TRUE(git.contains("compare_error"));
}

// A folder inside another repository is not a checkout of its own: comparing it with the outer
// repository's commits would name the wrong files.
TEST(Provenance, FolderInsideAnotherRepositoryIsNotACheckout) {
  test::GitFixture repo;
  repo.write("inner/kernels/a.cu", "a\n");
  repo.commit();
  const json git = git_of(repo.path() / "inner");
  EXPECT_EQ(git["source"], "none");
  EXPECT_TRUE(git["dirty"]);
}

// JSON strings hold UTF-8 only; a diff of a file in another encoding is left out, with the
// reason, rather than stop the run when its result is written.
TEST(Provenance, DiffThatIsNotUtf8IsLeftOutWithTheReason) {
  EXPECT_TRUE(is_valid_utf8("plain, \xC2\xB5s, \xE2\x80\xAF, \xF0\x9F\x99\x82"));
  for (const char* bad : {"\xB5", "caf\xE9 ", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x80"})
    EXPECT_FALSE(is_valid_utf8(bad)) << bad;
  test::GitFixture repo;
  repo.write("kernels/a.cu", "// caf\xC3\xA9\n");
  repo.commit();
  repo.write("kernels/a.cu", "// caf\xE9 (latin-1)\n");
  const json git = git_of(repo.path());
  EXPECT_TRUE(git["dirty"]);
  EXPECT_EQ(git["changed"], json({"kernels/a.cu"}));
  EXPECT_FALSE(git.contains("diff"));
  EXPECT_NE(git.value("diff_error", "").find("not UTF-8"), std::string::npos) << git;
  EXPECT_NO_THROW(git.dump());
}

TEST(Provenance, TimeIsIso8601Utc) {
  const std::string now = utc_now();
  EXPECT_EQ(now.size(), 20u) << now;
  EXPECT_EQ(now[10], 'T');
  EXPECT_EQ(now.back(), 'Z');
}

}  // namespace
}  // namespace kbench
