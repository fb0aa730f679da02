// SHA-256 and the build manifest: the hashes a result records must be reproducible from any
// checkout, whatever its line endings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "record/manifest.hpp"
#include "record/provenance.hpp"
#include "record/sha256.hpp"
#include "record_temp_dir.hpp"

namespace kbench {
namespace {

TEST(Sha256, KnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, NormalizesCrlfAndLoneCr) {
  EXPECT_EQ(normalize_line_endings("a\r\nb\rc\n\r\n"), "a\nb\nc\n\n");
  EXPECT_EQ(normalize_line_endings("no breaks"), "no breaks");
}

TEST(Sha256, CrlfAndLfFilesHashTheSame) {
  test::TempDir dir;
  dir.write("lf.cu", "int x;\nint y;\n");
  dir.write("crlf.cu", "int x;\r\nint y;\r\n");
  EXPECT_EQ(hash_source_file(dir.path() / "lf.cu"), hash_source_file(dir.path() / "crlf.cu"));
  EXPECT_EQ(hash_source_file(dir.path() / "lf.cu"), sha256_hex("int x;\nint y;\n"));
}

TEST(Sha256, OneChangedByteChangesTheHash) {
  test::TempDir dir;
  dir.write("a.cu", "int x = 1;\n");
  dir.write("b.cu", "int x = 2;\n");
  EXPECT_NE(hash_source_file(dir.path() / "a.cu"), hash_source_file(dir.path() / "b.cu"));
}

TEST(Sha256, UnreadableFileIsAUsageError) {
  test::TempDir dir;
  EXPECT_THROW(hash_source_file(dir.path() / "missing.cu"), UsageError);
  EXPECT_THROW(hash_source_file(dir.path()), UsageError);
}

TEST(BuildManifest, ListsTheSourcesOfThisBinary) {
  const auto& manifest = build_manifest();
  ASSERT_FALSE(manifest.empty());
  ASSERT_TRUE(manifest.contains("src/main.cpp"));
  ASSERT_TRUE(manifest.contains("CMakeLists.txt"));
  EXPECT_EQ(manifest.at("src/main.cpp").size(), 64u);
  for (const auto& [path, hex] : manifest) EXPECT_FALSE(is_ignored_source_path(path)) << path;
}

TEST(BuildManifest, BlockListsHarnessAndOpSourcesAsMeasured) {
  const auto block = manifest_block({{"add", {"kernels/add/"}}}, {"experiments/sweep"});
  EXPECT_EQ(block.at("algorithm"), "sha256");
  EXPECT_EQ(block.at("files").size(), build_manifest().size());
  for (const auto& path : block.at("measured").at("add")) {
    const std::string p = path.get<std::string>();
    EXPECT_TRUE(p.starts_with("kernels/add/") || p.starts_with("src/harness/") || p.starts_with("src/core/") ||
                p.starts_with("src/device/") || p.starts_with("src/registry/") || p.starts_with("cmake/") ||
                p == "CMakeLists.txt" || p == "CMakePresets.json" || p.starts_with("experiments/sweep"))
        << p;
  }
  // The harness (src/core/errors.hpp), the build files (compiler flags change numbers) and the
  // experiment's own code are what every op's numbers depend on.
  const auto& measured = block.at("measured").at("add");
  for (const char* path : {"src/core/errors.hpp", "CMakeLists.txt", "cmake/Manifest.cmake", "experiments/sweep.cpp"})
    EXPECT_NE(std::find(measured.begin(), measured.end(), path), measured.end()) << path;
  // Another experiment's code is not the sweep's.
  const auto other = manifest_block({{"add", {"kernels/add/"}}}, {"experiments/grid"});
  const auto& without = other.at("measured").at("add");
  EXPECT_EQ(std::find(without.begin(), without.end(), "experiments/sweep.cpp"), without.end());
}

TEST(TreeDifferences, FindsChangedMissingAndNewFiles) {
  const auto& manifest = build_manifest();
  test::TempDir tree;
  // A tree holding every manifest path with other content: every one of them differs.
  for (const auto& [path, hex] : manifest) tree.write(path, "not the real content\n");
  tree.write("kernels/new_op/new.cu", "// not in the manifest\n");
  const auto differences = tree_differences(tree.path());
  EXPECT_NE(std::find(differences.begin(), differences.end(), "src/main.cpp (changed)"),
            differences.end());
  EXPECT_NE(std::find(differences.begin(), differences.end(),
                      "kernels/new_op/new.cu (not in the manifest)"),
            differences.end());
  std::filesystem::remove(tree.path() / "src/main.cpp");
  const auto after_removal = tree_differences(tree.path());
  EXPECT_NE(std::find(after_removal.begin(), after_removal.end(), "src/main.cpp (missing)"),
            after_removal.end());
}

TEST(Provenance, FallsBackToTheCommitFileWithoutGit) {
  test::TempDir tree;
  EXPECT_EQ(provenance(tree.path())["git"]["commit"], "unknown");
  tree.write(".kbench-git-commit", "0123abcd\nsecond line\n");
  const auto p = provenance(tree.path());
  EXPECT_EQ(p["git"]["commit"], "0123abcd");
  EXPECT_EQ(p["git"]["source"], ".kbench-git-commit");
  EXPECT_FALSE(p["host"].get<std::string>().empty());
}

TEST(Provenance, ReadsGitReadOnlyAndIgnoresResults) {
  test::TempDir tree;
  const std::string git = "git -C '" + tree.path().string() + "' ";
  tree.write("kernels/a.cu", "a\n");
  ASSERT_EQ(std::system((git + "init -q && " + git + "add -A && " + git +
                         "-c user.name=t -c user.email=t@t commit -qm init >/dev/null 2>&1")
                            .c_str()),
            0);
  auto p = provenance(tree.path());
  EXPECT_EQ(p["git"]["source"], "git");
  EXPECT_EQ(p["git"]["commit"].get<std::string>().size(), 40u);
  EXPECT_FALSE(p["git"]["dirty"]);
  tree.write("results/sweep/x.json", "{}");  // a new result does not dirty the sources
  EXPECT_FALSE(provenance(tree.path())["git"]["dirty"]);
  tree.write("kernels/a.cu", "b\n");
  EXPECT_TRUE(provenance(tree.path())["git"]["dirty"]);
  EXPECT_FALSE(std::filesystem::exists(tree.path() / ".git" / "index.lock"));
}

// The GPU machine's copy: files of a newer commit over an older .git. git sees a dirty tree at
// the old commit; the marker names the new one and wins, with git's view kept beside it. Once
// the tree is clean, git wins over any marker (a stale marker must not relabel a clean tree).
TEST(Provenance, CommitFileNamesACopiedTreeThatGitSeesDirty) {
  test::TempDir tree;
  const std::string git = "git -C '" + tree.path().string() + "' ";
  const std::string commit = git + "add -A && " + git +
                             "-c user.name=t -c user.email=t@t commit -qm c >/dev/null 2>&1";
  tree.write("kernels/a.cu", "a\n");
  ASSERT_EQ(std::system((git + "init -q && " + commit).c_str()), 0);
  const std::string old_head = provenance(tree.path())["git"]["commit"];
  tree.write("kernels/a.cu", "newer\n");
  tree.write(".kbench-git-commit", "feedface\n");
  auto p = provenance(tree.path())["git"];
  EXPECT_EQ(p["commit"], "feedface");
  EXPECT_EQ(p["source"], ".kbench-git-commit");
  EXPECT_EQ(p["git_head"], old_head);
  EXPECT_TRUE(p["git_dirty"]);
  ASSERT_EQ(std::system(commit.c_str()), 0);
  p = provenance(tree.path())["git"];
  EXPECT_EQ(p["source"], "git");
  EXPECT_NE(p["commit"], "feedface");
  EXPECT_FALSE(p["dirty"]);
}

TEST(Provenance, TimeIsIso8601Utc) {
  const std::string now = utc_now();
  EXPECT_EQ(now.size(), 20u) << now;
  EXPECT_EQ(now[10], 'T');
  EXPECT_EQ(now.back(), 'Z');
}

}  // namespace
}  // namespace kbench
