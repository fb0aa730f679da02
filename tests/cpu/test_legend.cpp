// Every column a markdown table of `kbench report` or `kbench run` shows is explained in the
// legend under it (report/legend.hpp), over the committed results; a column without a definition
// cannot be shown.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "record/result.hpp"
#include "report/compare_report.hpp"
#include "report/legend.hpp"
#include "report/report.hpp"
#include "report/run_table.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

std::string trimmed(const std::string& s) {
  const auto a = s.find_first_not_of(' ');
  const auto b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// A header row's titles: "| a | b |" (cells may be padded).
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size()) {
      cell += row[++i];
      continue;
    }
    if (row[i] == '|') {
      out.push_back(trimmed(cell));
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// For every table of `md` (a header row followed by its rule), the titles its legend's lines
// name: the "- a, b: ..." lines after "Columns:" up to a line that is none. A title a legend
// leaves out is a failure; a table without a legend is one too.
void expect_every_column_explained(const std::string& md, const std::string& what, int& tables) {
  const std::vector<std::string> lines = lines_of(md);
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("|", 0) != 0 || lines[i + 1].find("---") == std::string::npos ||
        (i > 0 && lines[i - 1].rfind("|", 0) == 0))
      continue;
    ++tables;
    const std::vector<std::string> titles = cells(lines[i]);
    std::size_t at = i + 2;
    while (at < lines.size() && lines[at] != "Columns:") ++at;
    ASSERT_LT(at, lines.size()) << what << ": no legend under the table headed " << lines[i];
    std::set<std::string> explained;
    for (at += 2; at < lines.size() && lines[at].rfind("- ", 0) == 0; ++at) {
      const std::string named = lines[at].substr(2, lines[at].find(": ") - 2);
      for (std::size_t from = 0;;) {
        const auto comma = named.find(", ", from);
        explained.insert(named.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (comma == std::string::npos) break;
        from = comma + 2;
      }
    }
    for (const std::string& t : titles) EXPECT_TRUE(explained.count(t)) << what << ": column '" << t << "' unexplained";
  }
}

// Every result file committed under results/ (sweep, grid, probe, spec, fit, tolerance).
std::vector<fs::path> committed_results() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(KBENCH_SOURCE_DIR) / "results"))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path());
  return out;
}

TEST(Legend, EveryColumnOfTheReportOfEachCommittedResultIsExplained) {
  const std::vector<fs::path> files = committed_results();
  ASSERT_FALSE(files.empty());
  int tables = 0;
  std::set<std::string> experiments;
  for (const fs::path& file : files) {
    const Result r = read_result(file);
    experiments.insert(r.experiment);
    expect_every_column_explained(build_report({{file.string(), r}}, ReportFilter{}), file.filename().string(), tables);
    if (r.experiment == "sweep")
      expect_every_column_explained(run_table(r, "md", file.string()), "run " + file.filename().string(), tables);
  }
  for (const char* e : {"sweep", "grid", "probe", "spec"}) EXPECT_TRUE(experiments.count(e)) << e;
  EXPECT_GT(tables, static_cast<int>(2 * files.size())) << "the files' tables and the analyses' were all read";
}

TEST(Legend, EveryColumnOfACompareIsExplained) {
  const fs::path file = fs::path(KBENCH_SOURCE_DIR) / "results/sweep/sweep-20261201T081823Z-955a46.json";
  const Result r = read_result(file);  // the foundation run docs/results.md quotes
  const ReportInput in{file.string(), r};
  const Comparison c = compare_results(r, r);
  ASSERT_FALSE(c.cases.empty()) << file;
  int tables = 0;
  expect_every_column_explained(compare_markdown(in, in, c, kDefaultNoisePct), "compare", tables);
  EXPECT_EQ(tables, 2);  // the two runs' timer floors (this run has them), then the cases
}

TEST(Legend, ColumnsOfOneDefinitionShareALine) {
  const ColumnDefinitions defs({{"shape", "the shape"}, {"<variant>", "a variant's median"}, {"best", "the best"}});
  EXPECT_EQ(defs.legend({{"shape"}, {"auto", "<variant>"}, {"split", "<variant>"}, {"best"}}),
            "- shape: the shape\n- auto, split: a variant's median\n- best: the best\n");
}

TEST(Legend, AColumnWithoutADefinitionThrows) {
  const ColumnDefinitions defs(std::vector<ColumnDefinition>{{"shape", "the shape"}});
  EXPECT_THROW(defs.at("GB/s"), std::logic_error);
  EXPECT_THROW(defs.legend({{"shape"}, {"GB/s"}}), std::logic_error);
  EXPECT_THROW(defs.legend({{"auto", "<variant>"}}), std::logic_error);
  EXPECT_NO_THROW(defs.legend({{"shape"}}));
}

}  // namespace
}  // namespace kbench
