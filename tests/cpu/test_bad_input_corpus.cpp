// The bad-input corpus (tests/data/bad_input): every malformed command line, config and result
// file in it must be refused the same way, with no GPU needed: exit status 2, one line on
// stderr, nothing on stdout, and nothing written (the run's --out folder stays empty, and no
// results/ folder appears where kbench runs). The fit's lines read small grid results made
// here (tests/cpu/grid_fixture.hpp): of another device, op or set of cells, or the same run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/grid_fixture.hpp"
#include "cpu/run_command.hpp"
#include "cpu/shard_fixture.hpp"
#include "experiments/fit.hpp"
#include "experiments/grid_config.hpp"
#include "record/result.hpp"

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
  // The line echoes input printably and briefly: no escape sequence reaches the terminal, and a
  // 100 kB argument is not repeated whole.
  EXPECT_LE(o.err.size(), 600u) << what << ": " << o.err.substr(0, 600);
  EXPECT_TRUE(std::none_of(o.err.begin(), o.err.end() - (o.err.empty() ? 0 : 1),
                           [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      << what << ": a control character in " << o.err.substr(0, 600);
  // Bad input is refused before a GPU is looked for: on a machine with one it would have run.
  EXPECT_EQ(o.err.find("no CUDA device"), std::string::npos) << what << ": refused only for want of a GPU";
  EXPECT_TRUE(o.out.empty()) << what << ": " << o.out;
  EXPECT_TRUE(fs::is_empty(out)) << what << ": wrote into --out";
  EXPECT_TRUE(fs::is_empty(cwd)) << what << ": wrote into the folder it ran in";
  fs::remove_all(cwd);
  for (const auto& e : fs::directory_iterator(out)) fs::remove_all(e.path());  // one case's file fails it alone
}

// The grid results the fit's lines name ({grid}, {grid_a100}, ...), written under `work`: a
// small softmax grid and others that differ from it in one way each.
std::map<std::string, fs::path> write_grids(const fs::path& work) {
  const auto flat = [](auto, auto, const auto&) { return 10.0; };
  const std::vector<std::int64_t> rows = {1, 8, 132}, widths = {1000, 4096};
  std::map<std::string, Result> grids = {
      {"grid", test::synthetic_grid("softmax", rows, widths, flat, "t0")},
      {"grid_again", test::synthetic_grid("softmax", rows, widths, flat, "t1")},
      {"grid_a100", test::synthetic_grid("softmax", rows, widths, flat, "t1", "NVIDIA A100")},
      {"grid_rmsnorm", test::synthetic_grid("rmsnorm", rows, widths, flat, "t1")},
      {"grid_fewer_cells", test::synthetic_grid("softmax", {1, 8}, widths, flat, "t1")},
      {"grid_other_widths", test::synthetic_grid("softmax", rows, {1000, 4097}, flat, "t1")},
  };
  Result events = grids.at("grid_again");  // the same cells timed by the events timer
  events.extra["grid"]["timer"] = "events";
  for (auto& rec : events.records) rec.timer = "events";
  grids["grid_events"] = events;
  Result untimed = grids.at("grid_again");  // every plan failed its check: no timed cell
  for (auto& rec : untimed.records) rec.check.passed = false;
  grids["grid_untimed"] = untimed;
  Result no_cells = grids.at("grid_again");
  no_cells.extra["grid"]["cells"] = nlohmann::json::array();
  grids["grid_no_cells"] = no_cells;
  Result sweep = grids.at("grid_again");  // a grid's records under another experiment
  sweep.experiment = "sweep";
  grids["grid_as_sweep"] = sweep;
  for (const char* name : {"grid_add", "grid_add_again"}) {  // a grid of an op that is not a row op
    Result add = grids.at(std::string(name) == "grid_add" ? "grid" : "grid_again");
    add.extra["grid"]["op"] = "add";
    for (auto& rec : add.records) rec.op = "add";
    grids[name] = add;
  }
  std::map<std::string, fs::path> files;
  for (const auto& [name, r] : grids) {
    files[name] = work / (name + ".json");
    fs::rename(write_result(r, work / "written"), files[name]);
  }
  files["grid_copy"] = work / "grid_copy.json";  // the same run under another name
  fs::copy_file(files.at("grid"), files.at("grid_copy"));
  fs::remove_all(work / "written");
  return files;
}

// The shard results the merge lines name ({shard_0of2}, ...), written under `work`: the two
// shards of one plan, and others that differ from the second in one way each.
std::map<std::string, fs::path> write_shards(const fs::path& work) {
  const auto shard = [](int i, int n) { return test::synthetic_shard(i, n, 6, test::fixed_git()); };
  std::map<std::string, Result> shards = {{"shard_0of2", shard(0, 2)}, {"shard_1of2", shard(1, 2)},
                                          {"shard_1of3", shard(1, 3)}};
  Result a100 = shard(1, 2), commit = shard(1, 2), plan = shard(1, 2), grid = shard(1, 2);
  a100.device["name"] = "NVIDIA A100-SXM4-80GB";
  commit.meta["git"]["commit"] = std::string(40, 'c');
  plan.meta["shard"]["plan_sha256"] = std::string(64, 'e');
  grid.meta["shard"]["command"] = "grid";
  shards.insert({{"shard_1of2_a100", a100}, {"shard_1of2_commit", commit}, {"shard_1of2_plan", plan}, {"shard_1of2_grid", grid}});
  std::map<std::string, fs::path> files;
  for (const auto& [name, r] : shards) {
    files[name] = work / (name + ".json");
    fs::rename(write_result(r, work / "written"), files[name]);
  }
  files["shard_0of2_copy"] = work / "shard_0of2_copy.json";
  fs::copy_file(files.at("shard_0of2"), files.at("shard_0of2_copy"));
  fs::remove_all(work / "written");
  return files;
}

TEST(BadInputCorpus, CommandLines) {
  const fs::path work = test::fresh_temp_dir();
  const fs::path out = work / "out", dir = work / "a_folder", result = work / "result.json",
                 notjson = work / "notjson.json";
  fs::create_directories(out);
  fs::create_directories(dir);
  fs::copy_file(kReports / "kbench_h200.json", result);
  write_text(notjson, "{ not json");
  std::map<std::string, fs::path> inputs = write_grids(work);
  inputs.merge(write_shards(work));
  inputs["result"] = result;
  std::map<std::string, std::string> before;
  for (const auto& [name, file] : inputs) before[name] = test::read_file(file);
  inputs["out"] = out;
  inputs["dir"] = dir;
  inputs["a100"] = kReports / "kbench_a100.json";
  inputs["notjson"] = notjson;
  inputs["grid_json"] = fs::path(KBENCH_SOURCE_DIR) / "configs" / "grid.json";
  const auto lines = corpus_lines("cli.txt");
  EXPECT_GE(lines.size(), 300u);
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

// Result files edited field by field (tests/data/bad_input/results.txt), read by report and by
// compare as either of its two: each refused with a line that names the field's JSON pointer.
TEST(BadInputCorpus, ResultFieldEdits) {
  const fs::path work = test::fresh_temp_dir();
  const fs::path out = work / "out", file = work / "edited.json";
  fs::create_directories(out);
  const std::string fixture = test::shell_quoted(kReports / "kbench_h200.json");
  const nlohmann::json good = nlohmann::json::parse(test::read_file(kReports / "kbench_h200.json"));
  const auto lines = corpus_lines("results.txt");
  EXPECT_GE(lines.size(), 80u);
  int named = 0;
  for (const std::string& line : lines) {
    nlohmann::json j = good;
    std::string pointer;
    if (line[0] == '-') {
      pointer = line.substr(1);
      const nlohmann::json::json_pointer at(pointer);
      ASSERT_TRUE(j.contains(at)) << line;
      j[at.parent_pointer()].erase(at.back());
    } else {
      const auto space = line.find(' ');
      pointer = line.substr(0, space);
      j[nlohmann::json::json_pointer(pointer)] = nlohmann::json::parse(line.substr(space + 1));
    }
    write_text(file, j.dump());
    expect_refused("report " + test::shell_quoted(file), out, "report: " + line);
    expect_refused("compare " + test::shell_quoted(file) + " " + fixture, out, "compare A: " + line);
    expect_refused("compare " + fixture + " " + test::shell_quoted(file), out, "compare B: " + line);
    const std::string err = test::run_kbench("report " + test::shell_quoted(file)).err;
    EXPECT_NE(err.find("'" + pointer), std::string::npos) << line << ": " << err;
    named += err.find("'" + pointer) != std::string::npos;
  }
  EXPECT_EQ(named, static_cast<int>(lines.size()));
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
  // compare reads the same files, as either of its two; and refuses a median it cannot divide by.
  const std::string fixture = test::shell_quoted(kReports / "kbench_h200.json");
  for (const auto& [what, text] : bad) {
    write_text(file, text);
    expect_refused("report " + test::shell_quoted(file), out, what);
    expect_refused("compare " + test::shell_quoted(file) + " " + fixture, out, "compare A: " + what);
    expect_refused("compare " + fixture + " " + test::shell_quoted(file), out, "compare B: " + what);
  }
  for (const char* median : {"0", "-20.0"}) {
    write_text(file, edited("\"median_us\": 20.0", std::string("\"median_us\": ") + median));
    expect_refused("compare " + fixture + " " + test::shell_quoted(file), out, std::string("compare: median ") + median);
  }
  fs::remove_all(work);
}

// Grid results edited by hand, read by fit (beside an intact run of the same grid), and
// analyses edited by hand (grid, fit, probe, spec), read by report.
TEST(BadInputCorpus, AnalysedResultsEditedByHand) {
  const fs::path work = test::fresh_temp_dir();
  const fs::path out = work / "out", file = work / "edited.json";
  fs::create_directories(out);
  const auto flat = [](auto, auto, const auto&) { return 10.0; };
  const Result grid = test::synthetic_grid("softmax", {1, 8, 132}, {1000, 4096}, flat, "t0");
  const fs::path again = work / "again.json";
  fs::rename(write_result(test::synthetic_grid("softmax", {1, 8, 132}, {1000, 4096}, flat, "t1"), work / "w"), again);
  const nlohmann::json good = to_json(grid);
  using Edit = std::function<void(nlohmann::json&)>;
  const auto cell = [](nlohmann::json& j) -> nlohmann::json& { return j["extra"]["grid"]["cells"][0]; };
  const std::vector<std::pair<std::string, Edit>> grid_edits = {
      {"cells a number", [](auto& j) { j["extra"]["grid"]["cells"] = 3; }},
      {"cells an object", [](auto& j) { j["extra"]["grid"]["cells"] = {{"a", 1}}; }},
      {"a cell a number", [](auto& j) { j["extra"]["grid"]["cells"][0] = 1; }},
      {"a cell twice", [](auto& j) { j["extra"]["grid"]["cells"].push_back(j["extra"]["grid"]["cells"][0]); }},
      {"a cell without rows", [&](auto& j) { cell(j).erase("rows"); }},
      {"a cell's rows \"1\"", [&](auto& j) { cell(j)["rows"] = "1"; }},
      {"a cell's rows 1.5", [&](auto& j) { cell(j)["rows"] = 1.5; }},
      {"a cell's rows 1.4e50", [&](auto& j) { cell(j)["rows"] = 1.4e50; }},
      {"a cell's rows 0", [&](auto& j) { cell(j)["rows"] = 0; }},
      {"a cell's width 2^20 + 1", [&](auto& j) { cell(j)["width"] = 1048577; }},
      {"a cell's dtype int8", [&](auto& j) { cell(j)["dtype"] = "int8"; }},
      {"a cell's dtype a number", [&](auto& j) { cell(j)["dtype"] = 16; }},
      {"a cell's rule a number", [&](auto& j) { cell(j)["rule"] = 3; }},
      {"op a number", [](auto& j) { j["extra"]["grid"]["op"] = 3; }},
      {"cache a number", [](auto& j) { j["extra"]["grid"]["cache"] = 3; }},
      {"timer a list", [](auto& j) { j["extra"]["grid"]["timer"] = {"graph"}; }},
      {"device_limits a string", [](auto& j) { j["extra"]["grid"]["device_limits"] = "H200"; }},
      {"0 SMs (row_plan divides by them)", [](auto& j) { j["extra"]["grid"]["device_limits"]["sms"] = 0; }},
      {"-5 SMs", [](auto& j) { j["extra"]["grid"]["device_limits"]["sms"] = -5; }},
      {"1.5 SMs", [](auto& j) { j["extra"]["grid"]["device_limits"]["sms"] = 1.5; }},
      {"1e300 SMs", [](auto& j) { j["extra"]["grid"]["device_limits"]["sms"] = 1e300; }},
      {"0 threads per SM", [](auto& j) { j["extra"]["grid"]["device_limits"]["max_threads_per_sm"] = 0; }},
      {"a negative L2", [](auto& j) { j["extra"]["grid"]["device_limits"]["l2_bytes"] = -1; }},
      {"the device's uuid a number", [](auto& j) { j["device"]["uuid"] = 3; }},
      {"the device's name a number", [](auto& j) { j["device"]["name"] = 3; }},
      {"the start time a number", [](auto& j) { j["meta"]["started"] = 3; }},
  };
  for (const auto& [what, edit] : grid_edits) {
    nlohmann::json j = good;
    edit(j);
    write_text(file, j.dump());
    expect_refused("fit " + test::shell_quoted(file) + " " + test::shell_quoted(again) + " --out " + test::shell_quoted(out),
                   out, "fit A: " + what);
    expect_refused("fit " + test::shell_quoted(again) + " " + test::shell_quoted(file) + " --out " + test::shell_quoted(out),
                   out, "fit B: " + what);
  }
  // Analyses as report reads them: extra.grid.analysis, extra.fit, extra.spec.analysis. (The
  // probe's table shows a dash for each value it cannot read, so it has none to refuse.)
  const nlohmann::json fit = to_json(fit_result(grid, read_result(again), "A", "B", {}));
  Result spec;
  spec.experiment = "spec";
  const std::vector<std::tuple<std::string, nlohmann::json, std::vector<std::string>>> blocks = {
      {"grid", good, {"extra", "grid", "analysis"}},
      {"fit", fit, {"extra", "fit"}},
      {"spec", to_json(spec), {"extra", "spec", "analysis"}},
  };
  const std::vector<std::pair<std::string, nlohmann::json>> bad_blocks = {
      {"a string", "x"}, {"a number", 3}, {"a list of numbers", {1, 2}},
      {"counts as text", {{"cells", "x"}, {"mean_regret", "x"}, {"per_cell", {1}}, {"pauses", {1}}, {"cases", {1}},
                          {"current", "x"}, {"decision", "x"}, {"kernels", {1}}}},
  };
  for (const auto& [experiment, base, path] : blocks)
    for (const auto& [what, block] : bad_blocks) {
      nlohmann::json j = base;
      nlohmann::json* at = &j;
      for (const auto& key : path) at = &(*at)[key];
      *at = block;
      write_text(file, j.dump());
      expect_refused("report " + test::shell_quoted(file), out, "report " + experiment + ": analysis " + what);
    }
  fs::remove_all(work);
}

}  // namespace
}  // namespace kbench
