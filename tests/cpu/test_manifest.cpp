// SHA-256 and the build manifest: the hashes a result records must be reproducible from any
// checkout, whatever its line endings.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/errors.hpp"
#include "record/manifest.hpp"
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

bool lists(const nlohmann::json& measured, const std::string& path) {
  return std::find(measured.begin(), measured.end(), path) != measured.end();
}

TEST(BuildManifest, BlockListsHarnessBuildExperimentAndOpSourcesAsMeasured) {
  const auto block = manifest_block({{"add", {"kernels/add/"}}}, {"experiments/sweep"});
  EXPECT_EQ(block.at("algorithm"), "sha256");
  EXPECT_EQ(block.at("files").size(), build_manifest().size());
  const auto& measured = block.at("measured").at("add");
  for (const auto& path : measured) {
    const std::string p = path.get<std::string>();
    EXPECT_TRUE(p.starts_with("kernels/add/") || p.starts_with("src/harness/") ||
                p.starts_with("src/core/") || p.starts_with("src/device/") ||
                p.starts_with("src/registry/") || p.starts_with("experiments/sweep") ||
                p.starts_with("cmake/") || p == "CMakeLists.txt" || p == "CMakePresets.json")
        << p;
  }
  // Every op's numbers depend on the harness, the build and the experiment's loop.
  for (const char* path : {"src/core/errors.hpp", "src/registry/registry.cpp", "CMakeLists.txt",
                           "CMakePresets.json", "cmake/Manifest.cmake", "experiments/sweep.cpp"})
    EXPECT_TRUE(lists(measured, path)) << path;
  EXPECT_FALSE(lists(measured, "kernels/copy/copy.cu"));
  EXPECT_FALSE(lists(measured, "tests/CMakeLists.txt"));
}

// The experiment is whatever ran, not a fixed name: another experiment's loop is not measured.
TEST(BuildManifest, ExperimentSourcesComeFromTheCaller) {
  const auto block = manifest_block({{"add", {"kernels/add/"}}}, {"experiments/sweep_config"});
  const auto& measured = block.at("measured").at("add");
  EXPECT_TRUE(lists(measured, "experiments/sweep_config.cpp"));
  EXPECT_FALSE(lists(measured, "experiments/sweep.cpp"));
  EXPECT_TRUE(lists(measured, "src/harness/runner.cpp"));
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

// An experiment refuses a binary built from other sources than the tree holds (the runner calls
// this before any GPU work), naming the first file; the tree it was built from passes.
TEST(TreeDifferences, AStaleBinaryIsRefusedBeforeAnExperiment) {
  EXPECT_NO_THROW(require_tree_matches_binary(source_root()));
  test::TempDir tree;
  for (const auto& [path, hex] : build_manifest()) tree.write(path, "not the real content\n");
  try {
    require_tree_matches_binary(tree.path());
    ADD_FAILURE() << "a tree whose every file differs was accepted";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(build_manifest().size()) + " file(s)"), std::string::npos) << what;
    EXPECT_NE(what.find("(changed)"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace kbench
