// scripts/torch_baseline.py without a GPU or torch: --dry-run lists the cases of a config
// (skipping ops it does not know) and exits 0; a malformed config exits 2 with one line; its
// records digest and its git provenance are kbench's. Skipped when python3 is not on PATH.
#include <gtest/gtest.h>

#include "cpu/run_command.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/errors.hpp"
#include "core/json_schema.hpp"
#include "core/text.hpp"
#include "git_fixture.hpp"
#include "harness/runner.hpp"
#include "record/provenance.hpp"
#include "record/result.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kbench::test;
using kbench::Record;
using kbench::Result;
using kbench::provenance;
using kbench::records_digest;

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

// The training steps: both variants, and only the parameters the script times.
TEST(TorchScript, DryRunListsTheTrainingSteps) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const auto r = run_script("--config " + shell_quoted(fs::path(KBENCH_SOURCE_DIR) / "configs" / "side_by_side_steps.json") +
                            " --dry-run --dtype bfloat16 --ops softmax_step rmsnorm_step");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("softmax_step bfloat16 4096x4096 torch.eager,torch.compile\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rmsnorm_step bfloat16 4x32769 torch.eager,torch.compile\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("copy"), std::string::npos) << r.out;
}

TEST(TorchScript, StepParametersItDoesNotTimeExitTwo) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
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
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  for (const char* name : {"torch_bad_shape.json", "torch_not_json.json"}) {
    const auto r = run_script("--config " + config_arg(name) + " --dry-run");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1) << name << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << name << ": " << r.out;
  }
}

// "Shared with the PyTorch script": the script checks configs against kbench's schema file
// (configs/schema/sweep.schema.json) with a small interpreter of its own, and refuses exactly
// what kbench's valijson check refuses, over every config text of the bad-input corpus and every
// shipped sweep config.
TEST(TorchScript, RefusesWhatKbenchsSchemaRefuses) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  std::vector<std::string> texts;
  std::ifstream corpus(fs::path(KBENCH_TEST_DATA) / "bad_input" / "configs.txt");
  for (std::string line; std::getline(corpus, line);)
    if (!line.empty() && line[0] != '#') texts.push_back(line);
  for (const auto& e : fs::directory_iterator(fs::path(KBENCH_SOURCE_DIR) / "configs"))
    if (e.path().extension() == ".json" && !e.path().filename().string().starts_with("grid"))
      texts.push_back(nlohmann::json::parse(read_file(e.path())).dump());
  std::string kbench_verdicts;
  int refused = 0, accepted = 0;
  for (const auto& text : texts) {
    std::string verdict = "ok";
    try {
      kbench::JsonSchema::embedded("configs/schema/sweep.schema.json").validate(nlohmann::json::parse(text), "config");
      ++accepted;
    } catch (const nlohmann::json::exception&) {
      verdict = "not json";
    } catch (const kbench::UsageError&) {
      verdict = "refused";
      ++refused;
    }
    kbench_verdicts += verdict + "\n";
  }
  EXPECT_GE(refused, 100);
  EXPECT_GE(accepted, 20);
  TempDir dir;
  std::string lines;
  for (const auto& text : texts) lines += text + "\n";
  const auto file = dir.write("configs.txt", lines);
  const auto r = run_command("python3 -c " + shell_quoted(
      "import json, sys; sys.path.insert(0, sys.argv[1]); import torch_baseline as t\n"
      "schema = t.load_schema(t.CONFIG_SCHEMA)\n"
      "for line in open(sys.argv[2], encoding=\"utf-8\"):\n"
      "    try: config = t.parse_config_text(line)\n"
      "    except ValueError: print(\"not json\"); continue\n"
      "    print(\"refused\" if t.schema_problem(config, schema) else \"ok\")\n") +
      " " + shell_quoted(kScript.parent_path()) + " " + shell_quoted(file));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kbench_verdicts);
}

TEST(TorchScript, MissingConfigExitsTwo) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const auto r = run_script("--config " + config_arg("no_such_config.json") + " --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
}

// Records with what the canonical text must get exactly right in both languages: 17-digit
// decimals, exponents, a null (NaN) statistic, -0, large integers, both booleans, no visits.
Result digest_fixture() {
  Record a;
  a.op = "softmax";
  a.variant = "torch.eager";
  a.baseline = true;
  a.dtype = "bfloat16";
  a.shape = {4, 32769};
  a.cache = "cold";
  a.timer = "graph";
  a.samples_us = {0.1, 1e-5, 12.0, 123456.789, 3.0000000000000004};
  a.sample_visits = {0, 0, 1, 1, 2};
  a.median_us = 12.0;
  a.q1_us = 0.1;
  a.q3_us = std::nan("");
  a.min_us = 1e-5;
  a.bytes = 268435456;
  a.flops = 9007199254740992;  // 2^53
  a.gbps = 1.0 / 3.0;
  a.check.passed = true;
  Record b = a;
  b.variant = "torch.compile";
  b.baseline = false;
  b.shape = {};
  b.samples_us = {-0.0, 2.5e-300};
  b.sample_visits = {};
  b.gbps = 4.25e3;
  b.check.passed = false;
  Result r;
  r.experiment = "sweep";
  r.records = {a, b};
  return r;
}

TEST(TorchScript, RecordsDigestEqualsKbenchs) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const Result fixture = digest_fixture();
  TempDir dir;
  const fs::path file = write_result(fixture, dir.path());
  // Without the file's own digest: the script must compute it from the records.
  nlohmann::json j = nlohmann::json::parse(read_file(file));
  ASSERT_EQ(j["integrity"]["records"], records_digest(fixture.records));
  j.erase("integrity");
  dir.write(file.filename(), j.dump(1));
  const auto r = run_script("--records-digest " + shell_quoted(file));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(kbench::trim(r.out), records_digest(fixture.records));
  // One changed sample changes both.
  j["records"][0]["samples_us"][1] = 1.0000000000000002e-05;
  dir.write(file.filename(), j.dump(1));
  EXPECT_NE(kbench::trim(run_script("--records-digest " + shell_quoted(file)).out),
            records_digest(fixture.records));
}

// The PyTorch side's graph timer replays as many calls as kbench's does (graph_launch_count
// in harness/runner.hpp): before, its cold replays made one call per input set, a single call
// at the shapes of one set, which is not what kbench's figures beside them measure.
TEST(TorchScript, GraphLaunchCountIsKbenchs) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const std::pair<double, int> cases[] = {{47.0, 1},  {186.0, 1}, {6.16, 120}, {23.45, 4}, {44.85, 2},
                                          {0.1, 1},   {1.0, 1024}, {3.0, 7},   {0.0, 3},   {2500.0, 1},
                                          {9.7, 499}, {4.1, 600}};
  std::string calls, expected;
  for (const auto& [us, sets] : cases) {
    calls += "print(t.graph_launch_count(" + std::to_string(us) + ", " + std::to_string(sets) + "))\n";
    expected += std::to_string(kbench::graph_launch_count(us, sets)) + "\n";
  }
  const std::string program = "import sys\nsys.path.insert(0, " + shell_quoted(kScript.parent_path()) +
                              ")\nimport torch_baseline as t\n" + calls;
  TempDir dir;
  dir.write("count.py", program);
  const auto r = run_command("python3 " + shell_quoted(dir.path() / "count.py"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected);
}

TEST(TorchScript, RecordsDigestOfAnUnreadableFileExitsTwo) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  const auto r = run_script("--records-digest " + config_arg("torch_not_json.json"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
}

// The script's git_provenance() on a tree, as JSON (imported: no torch needed).
nlohmann::json python_provenance(const fs::path& root) {
  TempDir dir;
  const fs::path driver = dir.write(
      "provenance.py",
      "import json, sys\nfrom pathlib import Path\nsys.path.insert(0, sys.argv[1])\n"
      "import torch_baseline\nprint(json.dumps(torch_baseline.git_provenance(Path(sys.argv[2]))))\n");
  const auto r = run_command("python3 " + shell_quoted(driver) + " " +
                             shell_quoted(kScript.parent_path()) + " " + shell_quoted(root));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// Same rules as kbench's provenance: the same base commit, dirty only after a comparison that
// found nothing, the same diff byte for byte, and a marker whose commit is missing never clean.
TEST(TorchScript, GitProvenanceFollowsKbenchsRules) {
  if (!have_python3()) GTEST_SKIP() << "python3 is not on PATH";
  GitFixture repo;
  repo.write("kernels/a.cu", "a\n");
  repo.write("cmake/x.cmake", "x\n");
  repo.commit();
  const auto same = [&](const char* what) {
    const nlohmann::json cpp = provenance(repo.path())["git"];
    const nlohmann::json py = python_provenance(repo.path());
    EXPECT_EQ(py, cpp) << what;
    return cpp;
  };
  EXPECT_FALSE(same("clean")["dirty"]);
  repo.write("kernels/a.cu", "b\n");
  repo.write("src/new.bin", std::string("\0\1binary", 8));
  fs::remove_all(repo.path() / "cmake");
  const nlohmann::json dirty = same("changed, new binary, deleted folder");
  EXPECT_TRUE(dirty["dirty"]);
  EXPECT_TRUE(dirty.contains("diff"));
  repo.write(".kbench-git-commit", "feedfacefeedfacefeedfacefeedfacefeedface\n");
  const nlohmann::json missing = python_provenance(repo.path());
  EXPECT_EQ(missing["source"], ".kbench-git-commit");
  EXPECT_TRUE(missing["dirty"]);
  EXPECT_TRUE(missing.contains("compare_error")) << missing;
  EXPECT_FALSE(missing.contains("diff"));
  same("marker without its objects");
}

}  // namespace
