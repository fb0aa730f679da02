// scripts/torch_baseline.py without a GPU or torch: --dry-run lists the cases of a config
// (skipping ops it does not know) and exits 0; a malformed config exits 2 with one line, kbench's
// own. The script takes its cases from kbench's plan (kbench.plan, the binary beside the module)
// and times through the Python module kbench (docs/python.md), found beside the kbench binary;
// skipped when python3 is not on PATH or the module is not built.
#include <gtest/gtest.h>

#include "cpu/run_command.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "experiments/sweep_config.hpp"
#include "kernels/all_ops.hpp"
#include "record_temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kbench::test;

const fs::path kScript = fs::path(KBENCH_SOURCE_DIR) / "scripts" / "torch_baseline.py";
const fs::path kConfigs = fs::path(KBENCH_TEST_DATA) / "configs";

// The module lands in the build folder, beside the kbench binary (src/python/kbench_python.cmake).
fs::path module_dir() { return fs::path(KBENCH_BINARY).parent_path(); }

bool have_module() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(module_dir(), ec))
    if (e.path().filename().string().starts_with("kbench.cpython-")) return true;
  return false;
}

bool have_python3() {
  return std::system("command -v python3 >/dev/null 2>&1") == 0 && have_module();
}

std::string with_module(const std::string& command) {
  return "PYTHONPATH=" + shell_quoted(module_dir()) + " " + command;
}

CommandResult run_script(const std::string& args) {
  return run_command(with_module("python3 " + shell_quoted(kScript) + " " + args));
}

std::string config_arg(const std::string& name) { return shell_quoted(kConfigs / name); }


TEST(TorchScript, DryRunListsTheCasesOfTheConfig) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH or the Python module is not built";
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
  // An op the script does not know (kbench does) is skipped with a note, not an error.
  EXPECT_NE(r.err.find("skipping op 'gemm_backward'"), std::string::npos) << r.err;
}

TEST(TorchScript, DryRunHonoursFilters) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH or the Python module is not built";
  const auto r = run_script("--config " + config_arg("torch_dry_run.json") +
                            " --dry-run --ops softmax --dtype bfloat16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "softmax bfloat16 4096x4096 torch.eager,torch.compile\n"
            "softmax bfloat16 4x32769 torch.eager,torch.compile\n");
}

// The training steps: both variants, and only the parameters the script times.
TEST(TorchScript, DryRunListsTheTrainingSteps) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH or the Python module is not built";
  const auto r = run_script("--config " + shell_quoted(fs::path(KBENCH_SOURCE_DIR) / "configs" / "side_by_side_steps.json") +
                            " --dry-run --dtype bfloat16 --ops softmax_step rmsnorm_step");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("softmax_step bfloat16 4096x4096 torch.eager,torch.compile\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rmsnorm_step bfloat16 4x32769 torch.eager,torch.compile\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("copy"), std::string::npos) << r.out;
}

TEST(TorchScript, StepParametersItDoesNotTimeExitTwo) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH or the Python module is not built";
  TempDir dir;
  const auto config = [&](const std::string& op, const std::string& params) {
    return dir.write(op + ".json", R"({"experiment": "sweep", "cases": [{"op": ")" + op +
                                       R"(", "dtypes": ["float32"], "shapes": [[4, 8]], "params": )" + params + "}]}");
  };
  for (const auto& [op, params] : {std::pair<std::string, std::string>{"rmsnorm_step", R"({"frozen": 1})"},
                                   {"rmsnorm_step", R"({"dh": 0})"},
                                   {"rmsnorm_step", R"({"eps": 1e-5})"},
                                   {"softmax_step", R"({"eps": 1e-6})"}}) {
    const auto r = run_script("--config " + shell_quoted(config(op, params)) + " --dry-run");
    EXPECT_EQ(r.exit_code, 2) << op << " " << params << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const auto fine = run_script("--config " + shell_quoted(config("rmsnorm_step", R"({"dh": 1, "frozen": 0})")) + " --dry-run");
  EXPECT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_EQ(fine.out, "rmsnorm_step float32 4x8 torch.eager,torch.compile\n");
}

TEST(TorchScript, MalformedConfigExitsTwoWithOneLine) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH or the Python module is not built";
  for (const char* name : {"torch_bad_shape.json", "torch_not_json.json"}) {
    const auto r = run_script("--config " + config_arg(name) + " --dry-run");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1) << name << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << name << ": " << r.out;
  }
}

// "Shared with the PyTorch script": the script reads configs through kbench's plan (kbench.plan:
// `kbench run --dry-run`), kbench's own reader, so it refuses what kbench refuses with kbench's
// own line, over every config text of the bad-input corpus that the config reader itself refuses.
TEST(TorchScript, RefusesBadConfigsWithKbenchsLine) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH or the Python module is not built";
  TempDir dir;
  std::ifstream corpus(fs::path(KBENCH_TEST_DATA) / "bad_input" / "configs.txt");
  std::string expected, paths;
  int refused = 0;
  for (std::string line; std::getline(corpus, line);) {
    if (line.empty() || line[0] == '#') continue;
    const fs::path file = dir.write("config" + std::to_string(refused) + ".json", line);
    try {
      kbench::load_sweep_config(file);
      continue;  // refused later, by the registry (an unknown op): not the reader's to say
    } catch (const kbench::UsageError& e) {
      expected += "torch_baseline.py: error: " + std::string(e.what()) + "\n";
    }
    paths += file.string() + "\n";
    ++refused;
  }
  EXPECT_GE(refused, 100);
  const fs::path list = dir.write("paths.txt", paths);
  // One Python process for them all: main() on each, its stderr collected.
  const fs::path driver = dir.write(
      "driver.py",
      "import contextlib, io, sys\nsys.path.insert(0, sys.argv[1])\nimport torch_baseline as t\n"
      "for path in open(sys.argv[2], encoding='utf-8').read().splitlines():\n"
      "    err = io.StringIO()\n"
      "    with contextlib.redirect_stderr(err):\n"
      "        rc = t.main(['torch_baseline.py', '--config', path, '--dry-run'])\n"
      "    print(err.getvalue().rstrip('\\n') if rc == 2 else 'exit %d' % rc)\n");
  const auto r = run_command(with_module("python3 " + shell_quoted(driver) + " " + shell_quoted(kScript.parent_path()) +
                                         " " + shell_quoted(list)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected);
}

// The script's cases come from kbench.plan (the kbench binary's plan): every registered op, in
// every dtype, comes back with the parameters, bytes and flops the registry's op gives its case,
// the counts kbench's own records carry, so that the script's records compare with kbench's.
TEST(TorchScript, ModulePlanCountsAsKbenchsOps) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH or the Python module is not built";
  const kbench::Shape shapes[] = {{}, {4096}, {64, 1000}, {64, 48, 128}};  // by rank: [n], [rows, cols], [M, N, K]
  nlohmann::json config = {{"experiment", "sweep"}, {"cases", nlohmann::json::array()}};
  for (const kbench::Op& op : kbench::registry().ops())
    config["cases"].push_back({{"op", op.name}, {"dtypes", {"float32", "float16", "bfloat16"}},
                               {"shapes", {shapes[op.shape_rank]}}});
  TempDir dir;
  const fs::path file = dir.write("every_op.json", config.dump());
  const auto r = run_command(with_module("python3 -c 'import json, sys, kbench; print(json.dumps(kbench.plan(sys.argv[1])))' " +
                                         shell_quoted(file)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = nlohmann::json::parse(r.out);
  ASSERT_EQ(plan.at("cases").size(), 3 * kbench::registry().ops().size()) << r.out;
  for (const nlohmann::json& got : plan.at("cases")) {
    const kbench::Op& op = kbench::registry().op(got.at("op").get<std::string>());
    const kbench::Case c = kbench::make_case(op, kbench::parse_dtype(got.at("dtype").get<std::string>()),
                                             got.at("shape").get<kbench::Shape>());
    SCOPED_TRACE(kbench::case_label(c));
    EXPECT_EQ(got.at("shape").get<kbench::Shape>(), shapes[op.shape_rank]);
    EXPECT_EQ((got.at("params").get<std::map<std::string, double>>()), c.params);
    EXPECT_GT(got.at("bytes").get<double>(), 0);
    EXPECT_EQ(got.at("bytes").get<double>(), op.bytes(c));
    EXPECT_EQ(got.at("flops").get<double>(), op.flops(c));
  }
}

// An op kbench does not know is kbench's error, in kbench's words: the cases are kbench's plan.
TEST(TorchScript, OpUnknownToKbenchExitsTwoWithKbenchsLine) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH or the Python module is not built";
  TempDir dir;
  const fs::path file = dir.write("unknown.json", R"({"cases": [{"op": "not_an_op", "shapes": [[7]]}]})");
  const auto r = run_script("--config " + shell_quoted(file) + " --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("torch_baseline.py: error: unknown op 'not_an_op' (known: copy, ", 0), 0u) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(TorchScript, MissingConfigExitsTwo) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH or the Python module is not built";
  const auto r = run_script("--config " + config_arg("no_such_config.json") + " --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
}

}  // namespace
