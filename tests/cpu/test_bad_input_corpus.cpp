// The bad-input corpus (tests/data/bad_input): every malformed command line, config and result
// file in it must be refused the same way, with no GPU needed: exit status 2, one line on
// stderr, nothing on stdout, and nothing written (the run's --out folder stays empty, and no
// results/ folder appears where kbench runs).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cpu/run_command.hpp"
#include "experiments/grid_config.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;
const fs::path kCorpus = fs::path(KBENCH_TEST_DATA) / "bad_input";
const fs::path kReports = fs::path(KBENCH_TEST_DATA) / "report";

// The corpus file's lines, without blank lines and '#' comments.
std::vector<std::string> corpus_lines(const std::string& name) {
  std::ifstream in(kCorpus / name);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

// Runs kbench with `args` from a fresh folder and checks the bad-input contract. `out` is the
// folder the command may name as --out.
void expect_refused(const std::string& args, const fs::path& out, const std::string& what) {
  const fs::path cwd = test::fresh_temp_dir();
  const test::CommandResult o = test::run_command("cd " + test::shell_quoted(cwd) + " && " +
                                                  test::shell_quoted(KBENCH_BINARY) + " " + args);
  EXPECT_EQ(o.exit_code, 2) << what << ": " << o.err;
  EXPECT_EQ(test::line_count(o.err), 1) << what << ": " << o.err;
  // Bad input is refused before a GPU is looked for: on a machine with one it would have run.
  EXPECT_EQ(o.err.find("no CUDA device"), std::string::npos) << what << ": refused only for want of a GPU";
  EXPECT_TRUE(o.out.empty()) << what << ": " << o.out;
  EXPECT_TRUE(fs::is_empty(out)) << what << ": wrote into --out";
  EXPECT_TRUE(fs::is_empty(cwd)) << what << ": wrote into the folder it ran in";
  fs::remove_all(cwd);
  for (const auto& e : fs::directory_iterator(out)) fs::remove_all(e.path());  // one case's file fails it alone
}

TEST(BadInputCorpus, CommandLines) {
  const fs::path work = test::fresh_temp_dir();
  const fs::path out = work / "out", dir = work / "a_folder", result = work / "result.json",
                 notjson = work / "notjson.json";
  fs::create_directories(out);
  fs::create_directories(dir);
  fs::copy_file(kReports / "kbench_h200.json", result);
  write_text(notjson, "{ not json");
  std::map<std::string, fs::path> inputs = {{"result", result}};
  std::map<std::string, std::string> before;
  for (const auto& [name, file] : inputs) before[name] = test::read_file(file);
  inputs["out"] = out;
  inputs["dir"] = dir;
  inputs["a100"] = kReports / "kbench_a100.json";
  inputs["notjson"] = notjson;
  inputs["grid_json"] = fs::path(KBENCH_SOURCE_DIR) / "configs" / "grid.json";
  const auto lines = corpus_lines("cli.txt");
  EXPECT_GE(lines.size(), 200u);
  for (std::string args : lines) {
    const std::string what = args;
    for (const auto& [name, path] : inputs) replace_all(args, "{" + name + "}", test::shell_quoted(path));
    EXPECT_EQ(args.find('{'), std::string::npos) << what << ": a placeholder without a file";
    expect_refused(args, out, what);
  }
  for (const auto& [name, text] : before) EXPECT_EQ(test::read_file(inputs.at(name)), text) << name << " was changed";
  fs::remove_all(work);
}

TEST(BadInputCorpus, SweepConfigs) {
  const fs::path work = test::fresh_temp_dir();
  const fs::path out = work / "out", config = work / "config.json";
  fs::create_directories(out);
  const auto lines = corpus_lines("configs.txt");
  EXPECT_GE(lines.size(), 80u);
  for (const std::string& text : lines) {
    write_text(config, text);
    expect_refused("run --config " + test::shell_quoted(config) + " --out " + test::shell_quoted(out), out, "run: " + text);
    expect_refused("check --config " + test::shell_quoted(config), out, "check: " + text);
  }
  fs::remove_all(work);
}

// Grid configs (their whole text), read by kbench grid --op softmax: each is refused before any
// GPU is looked for. A config that differs from the control in nothing but its fault passes.
TEST(BadInputCorpus, GridConfigs) {
  const fs::path work = test::fresh_temp_dir();
  const fs::path out = work / "out", config = work / "grid.json";
  fs::create_directories(out);
  write_text(config, R"({"ops": ["softmax", "rmsnorm"], "rows": [4], "rows_per_sm": [0.5], "widths": [1024], "visits": 1})");
  GridSettings control = load_grid_config(config);
  control.op = "softmax";
  EXPECT_NO_THROW(validate_grid_settings(control));  // the control is a grid
  const auto lines = corpus_lines("grid_configs.txt");
  EXPECT_GE(lines.size(), 80u);
  for (const std::string& text : lines) {
    write_text(config, text);
    expect_refused("grid --op softmax --config " + test::shell_quoted(config) + " --out " + test::shell_quoted(out), out,
                   "grid: " + text);
    expect_refused("grid --op softmax --list --config " + test::shell_quoted(config), out, "grid --list: " + text);
  }
  fs::remove_all(work);
}

// Result files cut short, edited or of another schema, read by report.
TEST(BadInputCorpus, ResultFiles) {
  const fs::path work = test::fresh_temp_dir();
  const fs::path out = work / "out", file = work / "bad.json";
  fs::create_directories(out);
  const std::string good = test::read_file(kReports / "kbench_h200.json");
  std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"cut in half", good.substr(0, good.size() / 2)},
      {"cut before its last brace", good.substr(0, good.rfind('}'))},
      {"a JSON array", "[]"},
      {"a JSON string", "\"result\""},
      {"no records", "{\"schema\": \"kbench/result/v1\"}"},
      {"a number past double's range (found by fuzzing)", "{\"schema\": \"kbench/result/v1\", \"records\": [1e999]}"},
  };
  const auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const auto at = text.find(from);
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  };
  bad.push_back({"an int field of 1.4e50 (found by fuzzing)", edited("\"launches_per_sample\": 1", "\"launches_per_sample\": 1.4e50")});
  bad.push_back({"another schema", edited("\"schema\": \"kbench/result/v1\"", "\"schema\": \"kbench/result/v9\"")});
  bad.push_back({"records an object", edited("\"records\": [", "\"records\": {\"x\": [") + "}"});
  for (const auto& [what, text] : bad) {
    write_text(file, text);
    expect_refused("report " + test::shell_quoted(file), out, what);
  }
  fs::remove_all(work);
}

}  // namespace
}  // namespace kbench
