// scripts/torch_baseline.py without a GPU or torch: --dry-run lists the cases of a config
// (skipping ops it does not know) and exits 0; a malformed config exits 2 with one line.
// Skipped when python3 is not on PATH.
#include <gtest/gtest.h>

#include "cpu/run_command.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using namespace kbench::test;

const fs::path kScript = fs::path(KBENCH_SOURCE_DIR) / "scripts" / "torch_baseline.py";
const fs::path kConfigs = fs::path(KBENCH_TEST_DATA) / "configs";

bool have_python3() { return std::system("command -v python3 >/dev/null 2>&1") == 0; }

CommandResult run_script(const std::string& args) {
  return run_command("python3 " + shell_quoted(kScript) + " " + args);
}

std::string config_arg(const std::string& name) { return shell_quoted(kConfigs / name); }


TEST(TorchScript, DryRunListsTheCasesOfTheConfig) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const auto r = run_script("--config " + config_arg("torch_dry_run.json") +
                            " --out " + shell_quoted(fs::path(testing::TempDir())) + " --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "copy float32 1048576 torch.eager\n"
            "softmax float16 4096x4096 torch.eager,torch.compile\n"
            "softmax float16 4x32769 torch.eager,torch.compile\n"
            "softmax bfloat16 4096x4096 torch.eager,torch.compile\n"
            "softmax bfloat16 4x32769 torch.eager,torch.compile\n"
            "rmsnorm float32 128x32769 torch.eager,torch.rms_norm,torch.compile\n"
            "gemm bfloat16 1024x1024x1024 torch.eager,torch.compile\n");
  // An op the script does not know is skipped with a note, not an error.
  EXPECT_NE(r.err.find("skipping op 'not_an_op'"), std::string::npos) << r.err;
}

TEST(TorchScript, DryRunHonoursFilters) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const auto r = run_script("--config " + config_arg("torch_dry_run.json") +
                            " --dry-run --ops softmax --dtype bfloat16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "softmax bfloat16 4096x4096 torch.eager,torch.compile\n"
            "softmax bfloat16 4x32769 torch.eager,torch.compile\n");
}

TEST(TorchScript, MalformedConfigExitsTwoWithOneLine) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  for (const char* name : {"torch_bad_shape.json", "torch_not_json.json"}) {
    const auto r = run_script("--config " + config_arg(name) + " --dry-run");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1) << name << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << name << ": " << r.out;
  }
}

TEST(TorchScript, MissingConfigExitsTwo) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const auto r = run_script("--config " + config_arg("no_such_config.json") + " --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
}

}  // namespace
