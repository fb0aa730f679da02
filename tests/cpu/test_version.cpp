// kbench --version: the build's version, CUDA and architectures as CMake configured them, and
// the commit as provenance would name it, judged against the tree the binary reads. No GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/subprocess.hpp"
#include "core/text.hpp"
#include "cpu/run_command.hpp"
#include "core/build_info.hpp"
#include "record_temp_dir.hpp"

namespace kbench {
namespace {

std::string line_starting(const std::string& text, const std::string& prefix) {
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    if (line.rfind(prefix, 0) == 0) return line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return {};
}

TEST(Version, SaysWhatTheBuildIs) {
  const test::CommandResult o = test::run_kbench("--version");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_EQ(o.out.rfind(std::string("kbench ") + KBENCH_TEST_VERSION + "\n", 0), 0u) << o.out;
  // What CMake configured, not what the binary believes: the test gets the list from CMake too.
  std::string expected_archs = KBENCH_TEST_CUDA_ARCHITECTURES;
  EXPECT_EQ(build_info().architectures.empty(), expected_archs.empty());
  for (const std::string& arch : build_info().architectures) {
    EXPECT_NE(expected_archs.find(arch), std::string::npos) << arch;
    const std::string shown = "sm_" + arch.substr(0, arch.find('-'));
    EXPECT_NE(line_starting(o.out, "architectures:").find(shown), std::string::npos) << o.out;
  }
  const std::string cuda = line_starting(o.out, "CUDA:");
  EXPECT_NE(cuda.find("runtime " + build_info().cuda_runtime), std::string::npos) << o.out;
  EXPECT_EQ(cuda.find("unknown"), std::string::npos) << o.out;
  EXPECT_EQ(test::run_kbench("-V").out, o.out);
}

// In this checkout (the tree the binary was built from), the commit is the one provenance names:
// what .kbench-git-commit says where gpu_session.sh --prepare left one (the GPU machine's copy,
// whose own git HEAD is a stale snapshot), else git's HEAD.
TEST(Version, NamesTheCheckoutsCommit) {
  std::string expected;
  if (std::ifstream marker(std::string(KBENCH_SOURCE_DIR) + "/.kbench-git-commit"); marker) std::getline(marker, expected);
  if (expected.empty()) {
    const ProcessResult head = run_process({"git", "-C", KBENCH_SOURCE_DIR, "rev-parse", "HEAD"});
    if (!head.ok()) GTEST_SKIP() << "the source tree is not a git checkout";
    expected = trim(head.out);
  }
  const test::CommandResult o = test::run_kbench("--version");
  const std::string commit = line_starting(o.out, "commit:");
  EXPECT_NE(commit.find(trim(expected)), std::string::npos) << o.out;
}

// A tree that is not what the binary was built from says so, with the commit its marker names.
TEST(Version, SaysWhenTheTreeIsNotTheBinarys) {
  test::TempDir tree;
  tree.write("CMakeLists.txt", "# not kbench's\n");
  tree.write("kernels/add/add.cu", "// another kernel\n");
  tree.write(".kbench-git-commit", "0123abcd\n");
  const test::CommandResult o =
      test::run_command("KBENCH_ROOT=" + test::shell_quoted(tree.path()) + " " +
                        test::shell_quoted(KBENCH_BINARY) + " --version");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string commit = line_starting(o.out, "commit:");
  EXPECT_NE(commit.find("0123abcd"), std::string::npos) << o.out;
  EXPECT_NE(commit.find("differs from this binary's sources"), std::string::npos) << o.out;
  EXPECT_NE(commit.find("rebuild"), std::string::npos) << o.out;
}

TEST(Version, ArchitecturesText) {
  EXPECT_EQ(architectures_text({"90a"}), "sm_90a (+PTX)");
  EXPECT_EQ(architectures_text({"89-real", "90a-virtual"}), "sm_89, compute_90a");
  EXPECT_EQ(architectures_text({"all-major"}), "all-major");
  EXPECT_EQ(architectures_text({}), "none recorded");
}

}  // namespace
}  // namespace kbench
