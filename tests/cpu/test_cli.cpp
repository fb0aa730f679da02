// The command line's bad-input contract: one line on stderr and exit status 2, and no GPU
// needed to say so. Runs the real kbench binary.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cpu/run_command.hpp"
#include "experiments/grid_config.hpp"
#include "experiments/sweep_config.hpp"

namespace kbench {
namespace {

void expect_one_line_usage_error(const std::string& args, const std::string& needle) {
  const test::CommandResult o = test::run_kbench(args);
  EXPECT_EQ(o.exit_code, 2) << args << ": " << o.err;
  EXPECT_NE(o.err.find(needle), std::string::npos) << args << ": " << o.err;
  EXPECT_EQ(test::line_count(o.err), 1) << args << ": " << o.err;
  EXPECT_TRUE(o.out.empty()) << args << ": " << o.out;
}

TEST(Cli, UnknownOp) { expect_one_line_usage_error("run --op softmaxx --shape 4x4", "unknown op 'softmaxx'"); }
TEST(Cli, UnknownVariant) {
  expect_one_line_usage_error("run --op add --variant nope --shape 8", "unknown variant 'nope'");
}
TEST(Cli, MalformedShape) { expect_one_line_usage_error("run --op add --shape 12xq", "malformed shape"); }
TEST(Cli, WrongShapeRank) { expect_one_line_usage_error("check --op add --shape 4x4", "1-dimensional"); }
TEST(Cli, UnreadableConfig) {
  expect_one_line_usage_error("run --config /nonexistent/kbench.json", "cannot read config");
}
TEST(Cli, ConfigThatIsNotJson) {
  const auto f = std::filesystem::temp_directory_path() / "kbench_bad_config.json";
  FILE* out = std::fopen(f.c_str(), "w");
  std::fputs("{ not json", out);
  std::fclose(out);
  expect_one_line_usage_error("run --config " + f.string(), "not valid JSON");
}
TEST(Cli, UnknownDtypeAndCacheMode) {
  expect_one_line_usage_error("run --op add --shape 8 --dtype int8", "unknown dtype");
  expect_one_line_usage_error("run --op add --shape 8 --cache tepid", "unknown cache mode");
}
// A case no variant can serve is refused before anything runs, not reported as skips.
TEST(Cli, CaseNoVariantCanRun) {
  expect_one_line_usage_error("check --op softmax --shape 1x2097153", "no variant can run softmax");
  expect_one_line_usage_error("run --op rmsnorm_backward --shape 2x2097153", "no variant can run");
}
TEST(Cli, OpParameters) {
  expect_one_line_usage_error("check --op softmax --shape 4x4 --param frozen=1", "takes no parameter 'frozen'");
  expect_one_line_usage_error("check --op rmsnorm --shape 4x4 --param eps=-1", "must lie in");
  expect_one_line_usage_error("check --op rmsnorm --shape 4x4 --param eps=nan", "must lie in");
  expect_one_line_usage_error("check --op rmsnorm --shape 4x4 --param eps", "NAME=NUMBER");
  expect_one_line_usage_error("check --op rmsnorm_backward --shape 4x4 --param dh=2", "must lie in");
  expect_one_line_usage_error("check --op rmsnorm --shape 4x4 --param frozen=1", "takes no parameter 'frozen'");
}
// The training steps take their parts' parameters, with their ranges, and no others.
TEST(Cli, StepParameters) {
  expect_one_line_usage_error("check --op rmsnorm_step --shape 4x4 --param frozen=2", "must lie in");
  expect_one_line_usage_error("check --op rmsnorm_step --shape 4x4 --param dh=-1", "must lie in");
  expect_one_line_usage_error("check --op rmsnorm_step --shape 4x4 --param eps=0", "must lie in");
  expect_one_line_usage_error("check --op softmax_step --shape 4x4 --param eps=1e-6", "takes no parameter 'eps'");
  expect_one_line_usage_error("check --op softmax_step --shape 4096", "2-dimensional");
  expect_one_line_usage_error("run --op rmsnorm_step --variant fused --shape 4x4", "unknown variant 'fused'");
  expect_one_line_usage_error("check --op softmax_step --shape 1x2097153", "no variant can run softmax_step");
}
// Shapes, seeds and repeated names are refused on the command line, before any GPU work.
TEST(Cli, StrictArguments) {
  expect_one_line_usage_error("check --op add --shape 0", "between 1 and 2^33");
  expect_one_line_usage_error("check --op softmax --shape 4096x0", "between 1 and 2^33");
  expect_one_line_usage_error("check --op add --shape 2^40", "k <= 33");
  expect_one_line_usage_error("run --op add --shape 8 --seed -7", "seed");
  expect_one_line_usage_error("run --op add --shape 8 --variant vec16 --variant vec16", "'vec16' is given twice");
  expect_one_line_usage_error("run --op add --op add --shape 8", "'add' is given twice");
  expect_one_line_usage_error("run --op add --shape 8 --visits 0", "visits");
  expect_one_line_usage_error("run --op add --shape 8 --visits 2.5", "whole number");
  expect_one_line_usage_error("run --op add --shape 8 --device -1", "whole number");
  // One short line, not CLI11's 300-character range message.
  EXPECT_LT(test::run_kbench("run --op add --shape 8 --seed -7").err.size(), 120u);
}

// Directories where files are expected, and a report that would overwrite its own input.
TEST(Cli, FilesMustBeFiles) {
  const auto dir = std::filesystem::temp_directory_path();
  expect_one_line_usage_error("run --config " + dir.string(), "is a directory");
  expect_one_line_usage_error("report " + dir.string(), "is a directory");
  const auto copy = dir / "kbench_report_input.json";
  std::filesystem::copy_file(std::string(KBENCH_TEST_DATA) + "/report/kbench_h200.json", copy,
                             std::filesystem::copy_options::overwrite_existing);
  const std::string before = test::read_file(copy);
  expect_one_line_usage_error("report " + copy.string() + " --out " + copy.string(), "is one of the result files read");
  EXPECT_EQ(test::read_file(copy), before);
}

// Every defect of a config is named in one line before anything else runs: no "no CUDA
// device" in its place, and no silent default for a misspelt key.
TEST(Cli, StrictConfigs) {
  const std::string good_case = R"({"op": "add", "dtypes": ["float32"], "shapes": [[1024]]})";
  const std::pair<std::string, std::string> configs[] = {
      {R"({"cases": [)" + good_case + R"(], "visit": 3})", "unknown key '/visit'"},
      {R"({"cases": [)" + good_case + R"(], "timers": "graph"})", "unknown key '/timers'"},
      {R"({"cases": [{"op": "add", "dtype": ["float32"], "shapes": [[8]]}]})", "unknown key '/cases/0/dtype'"},
      {R"({"cases": [{"op": "add", "shapes": [[0]]}]})", "from 1 to"},
      {R"({"cases": [{"op": "add", "shapes": [[-5]]}]})", "from 1 to"},
      {R"({"cases": [{"op": "add", "shapes": [[1.5]]}]})", "whole number"},
      {R"({"cases": [{"op": "add", "shapes": [[1e20]]}]})", "whole number"},
      {R"({"cases": [{"op": "add", "shapes": [[1099511627776]]}]})", "from 1 to"},
      {R"({"cases": [{"op": "add", "shapes": [8]}]})", "'/cases/0/shapes/0' must be a shape: a list of 1 to 3"},
      {R"({"cases": [)" + good_case + R"(], "visits": 2.7})", "whole number"},
      {R"({"cases": [)" + good_case + R"(], "visits": 1e12})", "whole number"},
      {R"({"cases": [)" + good_case + R"(], "samples": 1000000000000})", "whole number"},
      {R"({"cases": [)" + good_case + R"(], "seed": -7})", "whole number"},
      {R"({"cases": [)" + good_case + R"(], "experiment": "../evil"})", "plain name"},
      {R"({"cases": [)" + good_case + R"(], "experiment": ""})", "plain name"},
      {R"({"cases": ["add"]})", "'/cases/0' must be a case: an object"},
  };
  const auto f = std::filesystem::temp_directory_path() / "kbench_strict_config.json";
  for (const auto& [text, needle] : configs) {
    FILE* out = std::fopen(f.c_str(), "w");
    std::fputs(text.c_str(), out);
    std::fclose(out);
    for (const char* cmd : {"run", "check"}) expect_one_line_usage_error(std::string(cmd) + " --config " + f.string(), needle);
  }
}

// The tolerance probe refuses bad input before it looks for a GPU.
TEST(Cli, ToleranceProbeBadInput) {
  for (const char* n : {"0", "-3", "abc", "2.5", "3x", "1000001"})
    expect_one_line_usage_error(std::string("check --tolerance-probe=") + n, "--tolerance-probe expects a whole number");
  expect_one_line_usage_error("check --tolerance-probe 3 --shape 4x4", "--shape and --param do not apply");
  expect_one_line_usage_error("check --tolerance-probe 3 --config configs/quick.json", "do not apply");
  expect_one_line_usage_error("check --tolerance-probe 3 --op softmaxx", "unknown op 'softmaxx'");
  expect_one_line_usage_error("check --tolerance-probe 3 --op add --variant nope", "unknown variant 'nope'");
  expect_one_line_usage_error("check --tolerance-probe 3 --dtype float64", "float64");
  expect_one_line_usage_error("check --tolerance-probe", "tolerance-probe");
  // A file where <out>/tolerance/ would go is refused before the GPU, and left as it was.
  const auto root = test::fresh_temp_dir();
  std::ofstream(root / "tolerance") << "a file";
  expect_one_line_usage_error("check --tolerance-probe 3 --out " + test::shell_quoted(root),
                              (root / "tolerance").string() + " is not a directory");
  EXPECT_EQ(test::read_file(root / "tolerance"), "a file");
  expect_one_line_usage_error("check --op add --shape 8 --out " + test::shell_quoted(root),
                              "--out applies to --tolerance-probe only");
  std::filesystem::remove_all(root);
}
TEST(Cli, UnknownOption) { expect_one_line_usage_error("run --frobnicate", "frobnicate"); }

TEST(Cli, HelpExitsZeroForEveryCommand) {
  for (const char* cmd : {"", "list", "run", "check", "verify", "report", "grid", "fit", "probe", "spec"})
    EXPECT_EQ(test::run_kbench(std::string(cmd) + " --help").exit_code, 0) << cmd;
}

TEST(SweepConfig, ShapesParse) {
  EXPECT_EQ(parse_shape("4096x4096"), (std::vector<std::int64_t>{4096, 4096}));
  EXPECT_EQ(parse_shape("2^28"), (std::vector<std::int64_t>{std::int64_t{1} << 28}));
  EXPECT_EQ(parse_shape("3x2^20"), (std::vector<std::int64_t>{3, 1 << 20}));
  EXPECT_ANY_THROW(parse_shape("3^2"));
  EXPECT_ANY_THROW(parse_shape("-4"));
  EXPECT_ANY_THROW(parse_shape("1x2x3x4"));
  EXPECT_ANY_THROW(parse_shape("0"));
  EXPECT_ANY_THROW(parse_shape("8x0"));
  EXPECT_EQ(parse_shape("2^33"), (std::vector<std::int64_t>{kMaxDim}));
}

TEST(SweepConfig, TheShippedConfigsLoad) {
  for (const auto& e : std::filesystem::directory_iterator(std::string(KBENCH_SOURCE_DIR) + "/configs")) {
    if (e.path().extension() != ".json") continue;
    if (e.path().filename().string().starts_with("grid")) {  // a grid's config (test_grid.cpp)
      EXPECT_FALSE(load_grid_config(e.path()).widths.empty()) << e.path();
      continue;
    }
    const SweepSettings s = load_sweep_config(e.path());
    EXPECT_FALSE(s.cases.empty()) << e.path();
    EXPECT_GE(s.visits * s.samples, 9) << e.path() << ": defaults must give at least 9 samples";
  }
}

}  // namespace
}  // namespace kbench
