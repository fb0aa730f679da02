// kbench report: the tables' ratios and missing cells, the refusal to mix devices, and the
// command line (exit status, one-line errors, --out) on the fixture files in tests/data/report.
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
#include <vector>

#include "core/errors.hpp"
#include "record/result.hpp"
#include "report/report.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using namespace kbench::test;

const fs::path kFixtures = fs::path(KBENCH_TEST_DATA) / "report";

Record make_record(const std::string& variant, bool baseline, std::vector<std::int64_t> shape,
                   double median_us, double copy_fraction = 0) {
  Record r;
  r.op = "softmax";
  r.variant = variant;
  r.baseline = baseline;
  r.dtype = "float16";
  r.shape = std::move(shape);
  r.cache = "cold";
  r.timer = "events";
  r.samples_us = {median_us};
  r.median_us = r.q1_us = r.q3_us = r.min_us = median_us;
  r.bytes = 4.0 * 4096 * 4096;
  r.gbps = r.bytes / median_us / 1e3;
  r.copy_fraction = copy_fraction;
  r.check.passed = true;
  return r;
}

std::vector<std::string> split_row(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line.substr(1));  // past the leading '|'
  std::string cell;
  while (std::getline(ss, cell, '|')) {
    const auto first = cell.find_first_not_of(' ');
    const auto last = cell.find_last_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  return cells;
}

// The cell in the column named `column` of the first table row that starts with `row_start`.
std::string cell_at(const std::string& table, const std::string& row_start,
                    const std::string& column) {
  std::stringstream ss(table);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(ss, line)) {
    if (line.rfind("| shape |", 0) == 0) header = split_row(line);
    if (line.rfind("| " + row_start + " |", 0) != 0) continue;
    const auto cells = split_row(line);
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i)
      if (header[i] == column) return cells[i];
    return "<no column " + column + ">";
  }
  return "<no row " + row_start + ">";
}

TEST(ReportTable, RatioIsBaselineMedianOverBestKbenchMedian) {
  const std::vector<Record> records = {
      make_record("single_block", false, {4096, 4096}, 20, 0.8),
      make_record("looped", false, {4096, 4096}, 25, 0.64),
      make_record("eager", true, {4096, 4096}, 50),
      make_record("torch.eager", true, {4096, 4096}, 40),
  };
  const std::string table = op_table("softmax", records);
  EXPECT_EQ(cell_at(table, "4096x4096", "best"), "single_block") << table;
  EXPECT_EQ(cell_at(table, "4096x4096", "best vs eager"), "2.50x") << table;
  EXPECT_EQ(cell_at(table, "4096x4096", "best vs torch.eager"), "2.00x") << table;
  EXPECT_EQ(cell_at(table, "4096x4096", "best / copy"), "80%") << table;
  EXPECT_EQ(cell_at(table, "4096x4096", "looped"), "25.0 us, 2684 GB/s") << table;
}

// Timed in the same visits of one run, "best vs" adds the per-visit ratios' order-statistic
// interval; records of two files never pair. "fastest" counts the baselines; cells give the IQR.
TEST(ReportTable, PairedIntervalFastestAndIqr) {
  Record own = make_record("looped", false, {4096, 4096}, 20);
  Record base = make_record("cub", true, {4096, 4096}, 10);
  own.samples_us = {19, 20, 21, 20, 22};
  base.samples_us = {10, 10, 11, 10, 9};
  own.sample_visits = base.sample_visits = {0, 1, 2, 3, 4};
  own.q1_us = 19.5;
  own.q3_us = 21;
  const std::vector<Record> records{own, base};
  const std::string paired = op_table("softmax", records, {0, 0});
  // Per-visit ratios 10/19, 10/20, 11/21, 10/20, 9/22: 0.41 to 0.53, every one of the five.
  EXPECT_EQ(cell_at(paired, "4096x4096", "best vs cub"), "0.50x [0.41-0.53, 94%]") << paired;
  EXPECT_EQ(cell_at(paired, "4096x4096", "fastest"), "cub") << paired;
  EXPECT_EQ(cell_at(paired, "4096x4096", "looped"), "20.0 us (IQR 1.50), 3355 GB/s") << paired;
  const std::string apart = op_table("softmax", records, {0, 1});
  EXPECT_EQ(cell_at(apart, "4096x4096", "best vs cub"), "0.50x") << apart;
}

// The pipes that separate cells, those escaped as "\|" not counted.
int cell_separators(const std::string& line) {
  int n = 0;
  for (std::size_t i = 0; i < line.size(); ++i) n += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
  return n;
}

// Names come from result files: a '|', a newline, an escape sequence or '<' in one is text in its
// cell, never table syntax or terminal control; every row keeps the header's cells.
TEST(ReportTable, NamesFromFilesAreEscaped) {
  std::vector<Record> records = {make_record("a|b\n<i>\x1b[2J", false, {4096, 4096}, 20),
                                 make_record("torch.eager", true, {4096, 4096}, 40)};
  for (auto& r : records) r.op = "soft|max";
  const std::string table = op_table("soft|max", records);
  EXPECT_EQ(table.rfind("## soft\\|max\n", 0), 0u) << table;
  EXPECT_NE(table.find("a\\|b\\\\x0a&lt;i>\\\\x1b[2J"), std::string::npos) << table;
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  std::stringstream ss(table);
  int rows = 0, header = -1;
  for (std::string line; std::getline(ss, line);) {
    if (line.empty() || line[0] != '|') continue;
    if (header < 0) header = cell_separators(line);
    EXPECT_EQ(cell_separators(line), header) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 3);  // header, rule, one shape
}

TEST(ReportTable, MissingCellShowsDash) {
  const std::vector<Record> records = {
      make_record("looped", false, {4096, 4096}, 20),
      make_record("torch.eager", true, {4096, 4096}, 40),
      make_record("looped", false, {4, 32769}, 10),
  };
  const std::string table = op_table("softmax", records);
  EXPECT_EQ(cell_at(table, "4x32769", "torch.eager"), "—") << table;
  EXPECT_EQ(cell_at(table, "4x32769", "best vs torch.eager"), "—") << table;
  EXPECT_EQ(cell_at(table, "4x32769", "best / copy"), "—") << table;
  EXPECT_EQ(cell_at(table, "4x32769", "best"), "looped") << table;
}

TEST(ReportTable, FailedCheckIsNeverBest) {
  std::vector<Record> records = {
      make_record("fast_but_wrong", false, {4096, 4096}, 5),
      make_record("looped", false, {4096, 4096}, 20),
      make_record("torch.eager", true, {4096, 4096}, 40),
  };
  records[0].check.passed = false;
  const std::string table = op_table("softmax", records);
  EXPECT_EQ(cell_at(table, "4096x4096", "best"), "looped") << table;
  EXPECT_EQ(cell_at(table, "4096x4096", "best vs torch.eager"), "2.00x") << table;
  EXPECT_NE(cell_at(table, "4096x4096", "fast_but_wrong").find("check failed"), std::string::npos);
}

TEST(ReportTable, OnlyBaselinesGiveNoBest) {
  const std::string table = op_table("softmax", {make_record("torch.eager", true, {64, 64}, 3)});
  EXPECT_EQ(cell_at(table, "64x64", "best"), "—") << table;
  EXPECT_EQ(cell_at(table, "64x64", "best vs torch.eager"), "—") << table;
}

TEST(ReportTable, GemmCellsShowTflops) {
  Record r = make_record("tiled", false, {1024, 1024, 1024}, 10);
  r.op = "gemm";
  r.flops = 2.0 * 1024 * 1024 * 1024;
  r.tflops = r.flops / r.median_us / 1e6;
  EXPECT_EQ(cell_at(op_table("gemm", {r}), "1024x1024x1024", "tiled"), "10.0 us, 214.7 TFLOP/s");
}

TEST(ReportTable, LaterFileWinsADuplicateCellAndSaysSo) {
  const std::vector<Record> records = {make_record("looped", false, {64, 64}, 30),
                                       make_record("looped", false, {64, 64}, 20)};
  const std::string table = op_table("softmax", records);
  EXPECT_EQ(cell_at(table, "64x64", "looped").rfind("20.0 us", 0), 0u) << table;
  EXPECT_NE(table.find("1 cell(s) were measured in more than one file"), std::string::npos);
}

// Two runs of one shape at different parameters (rmsnorm_backward with and without dh) are
// two rows, each with its parameters, not one replacing the other.
TEST(ReportTable, CellsAtDifferentParamsAreTwoRows) {
  Record with_dh = make_record("auto", false, {64, 64}, 30), without_dh = make_record("auto", false, {64, 64}, 20);
  with_dh.params = {{"dh", 1}, {"eps", 1e-6}};
  without_dh.params = {{"dh", 0}, {"eps", 1e-6}};
  const std::string table = op_table("softmax", {with_dh, without_dh});
  EXPECT_EQ(table.find("more than one file"), std::string::npos) << table;
  EXPECT_NE(table.find("| 64x64 | dh=1 eps=1e-06 | float16 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| 64x64 | dh=0 eps=1e-06 | float16 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| shape | params | dtype |"), std::string::npos) << table;
}

// A baseline that states its parameters (the PyTorch script's RMSNorm records) joins the row of
// kbench's records at those parameters, where several sets share a shape.
TEST(ReportTable, BaselineJoinsTheRowOfItsParameters) {
  Record with_dh = make_record("auto", false, {64, 64}, 30), without_dh = make_record("auto", false, {64, 64}, 20);
  Record compiled = make_record("torch.compile", true, {64, 64}, 22);
  with_dh.params = {{"dh", 1}, {"eps", 1e-6}};
  without_dh.params = compiled.params = {{"dh", 0}, {"eps", 1e-6}};
  const std::string table = op_table("softmax", {with_dh, without_dh, compiled});
  EXPECT_EQ(cell_at(table, "64x64 | dh=0 eps=1e-06", "best vs torch.compile"), "1.10x") << table;
  EXPECT_EQ(cell_at(table, "64x64 | dh=1 eps=1e-06", "best vs torch.compile"), "—") << table;
}

// One parameter set per cell: no column, and a record that carries none (the PyTorch
// script's) shares the row of one that does.
TEST(ReportTable, OneParameterSetPerCellNeedsNoColumn) {
  Record kbench = make_record("auto", false, {64, 64}, 30);
  kbench.params = {{"eps", 1e-6}};
  const std::string table = op_table("softmax", {kbench, make_record("torch.compile", true, {64, 64}, 33)});
  EXPECT_EQ(table.find("params"), std::string::npos) << table;
  EXPECT_EQ(cell_at(table, "64x64", "best vs torch.compile"), "1.10x") << table;
}

Result on_device(const std::string& name, const std::string& uuid) {
  Result r;
  r.device = {{"name", name}};
  if (!uuid.empty()) r.device["uuid"] = uuid;
  return r;
}

// The variants a file has no record of because they failed (their check, or a fault in a worker:
// extra.check_failures, extra.faults) are listed as failed, escaped like every name from a file.
TEST(ReportTable, FailedAndFaultedVariantsAreListed) {
  Result r = on_device("NVIDIA H200", "GPU-1");
  r.records = {make_record("auto", false, {4096, 4096}, 10.0, 0.9)};
  EXPECT_EQ(build_report({{"a.json", r}}, ReportFilter{}).find("Failed, not timed"), std::string::npos);
  r.extra = {{"faults", {{{"op", "add"}, {"variant", "fault_address"}, {"dtype", "float32"}, {"shape", {1024}},
                          {"phase", "check"}, {"error", "internal error: an illegal memory access|x"}}}},
             {"check_failures", {{{"op", "softmax"}, {"variant", "looped"}, {"dtype", "float16"}, {"shape", {8, 8}},
                                  {"detail", "max_err 1 above 0.01"}}}}};
  const std::string report = build_report({{"a.json", r}}, ReportFilter{});
  EXPECT_NE(report.find("Failed, not timed:"), std::string::npos) << report;
  EXPECT_NE(report.find("- a.json: add fault_address float32 [1024] faulted in its check step: internal error: an "
                        "illegal memory access\\|x"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("- a.json: softmax looped float16 [8,8] failed its check: max_err 1 above 0.01"),
            std::string::npos)
      << report;
}

TEST(ReportTable, TimerFloorsAreListedPerFile) {
  Result r = on_device("NVIDIA H200", "GPU-1");
  r.records = {make_record("auto", false, {4096, 4096}, 10.0, 0.9)};
  EXPECT_EQ(build_report({{"a.json", r}}, ReportFilter{}).find("Timer floors"), std::string::npos);
  r.extra = {{"timer_floor", {{{"cache", "cold"}, {"timer", "events"}, {"median_us", 2.976}}}}};
  const std::string report = build_report({{"a.json", r}}, ReportFilter{});
  EXPECT_NE(report.find("| a.json | cold | events | — | — | 2.976 us |"), std::string::npos) << report;
  r.extra["timer_floor_before"] = {{{"cache", "cold"}, {"timer", "events"}, {"median_us", 2.5}}};
  const std::string both = build_report({{"a.json", r}}, ReportFilter{});
  EXPECT_NE(both.find("| a.json | cold | events | — | 2.500 us | 2.976 us |"), std::string::npos) << both;
  r.extra["timer_floor_start"] = {{{"cache", "cold"}, {"timer", "events"}, {"median_us", 2.25}}};
  const std::string all = build_report({{"a.json", r}}, ReportFilter{});
  EXPECT_NE(all.find("| a.json | cold | events | 2.250 us | 2.500 us | 2.976 us | — |"), std::string::npos) << all;
  r.extra["visit_floors"] = {{{"cache", "cold"}, {"timer", "events"}, {"median_us", 2.9},
                              {"visit_median_range_us", {2.75, 3.125}}}};
  const std::string visits = build_report({{"a.json", r}}, ReportFilter{});
  EXPECT_NE(visits.find("| a.json | cold | events | 2.250 us | 2.500 us | 2.976 us | 2.900 us (2.750-3.125) |"),
            std::string::npos)
      << visits;
}

TEST(ReportDevices, DifferentUuidsAreRefused) {
  EXPECT_THROW(require_same_device({{"a.json", on_device("NVIDIA H200", "GPU-1")},
                                    {"b.json", on_device("NVIDIA H200", "GPU-2")}}),
               UsageError);
}

TEST(ReportDevices, NamesDecideWhenAFileHasNoUuid) {
  EXPECT_NO_THROW(require_same_device({{"a.json", on_device("NVIDIA H200", "GPU-1")},
                                       {"b.json", on_device("NVIDIA H200", "")}}));
  EXPECT_THROW(require_same_device({{"a.json", on_device("NVIDIA H200", "GPU-1")},
                                    {"b.json", on_device("NVIDIA A100", "")}}),
               UsageError);
}

TEST(ReportDevices, SameUuidIsAccepted) {
  EXPECT_NO_THROW(require_same_device({{"a.json", on_device("NVIDIA H200", "GPU-1")},
                                       {"b.json", on_device("NVIDIA H200", "GPU-1")}}));
}

std::vector<ReportInput> fixture_inputs(const std::vector<std::string>& names) {
  std::vector<ReportInput> inputs;
  for (const auto& name : names) inputs.push_back({name, read_result(kFixtures / name)});
  return inputs;
}

TEST(ReportFixtures, KbenchAndTorchRunsMergeIntoOneTable) {
  const std::string report =
      build_report(fixture_inputs({"kbench_h200.json", "torch_h200.json"}), ReportFilter{});
  EXPECT_NE(report.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(report.find("scripts/torch_baseline.py"), std::string::npos);
  EXPECT_NE(report.find("kbench_h200.json: GPU was 37% busy"), std::string::npos) << report;
  EXPECT_NE(report.find("## copy"), std::string::npos);
  EXPECT_LT(report.find("## copy"), report.find("## gemm"));  // copy first: the ceiling
  EXPECT_EQ(cell_at(report, "4096x4096 | float16 | cold | events", "best vs torch.compile"),
            "1.50x") << report;
  EXPECT_EQ(cell_at(report, "4x32769 | float16 | cold | events", "best vs torch.eager"), "0.80x");
  EXPECT_EQ(cell_at(report, "4x32769 | float16 | cold | events", "torch.compile"), "—");
  // The torch cells come from another file: never paired. kbench's gemm and cublas share the
  // fixture's three visits: paired, at the 75% that three visits give.
  EXPECT_EQ(cell_at(report, "1024x1024x1024", "best vs cublas"), "1.20x [1.20-1.20, 75%]");
}

TEST(ReportFixtures, FilterShowsOnlyTheChosenModes) {
  ReportFilter warm_only;
  warm_only.cache = "warm";
  const std::string report =
      build_report(fixture_inputs({"kbench_h200.json", "torch_h200.json"}), warm_only);
  EXPECT_NE(report.find("| warm | graph |"), std::string::npos) << report;
  EXPECT_EQ(report.find("| cold |"), std::string::npos) << report;
}

// --- the command line ------------------------------------------------------------------------

std::string fixture_arg(const std::string& name) { return shell_quoted(kFixtures / name); }


TEST(ReportCommand, MismatchedDevicesExitTwoWithOneLine) {
  const auto r = run_kbench("report " + fixture_arg("kbench_h200.json") + " " +
                            fixture_arg("kbench_a100.json"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("different devices"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(ReportCommand, MissingFileExitsTwo) {
  const auto r = run_kbench("report " + fixture_arg("no_such_file.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
}

TEST(ReportCommand, BadCacheChoiceExitsTwo) {
  const auto r = run_kbench("report --cache lukewarm " + fixture_arg("kbench_h200.json"));
  EXPECT_EQ(r.exit_code, 2);
}

TEST(ReportCommand, PrintsToStdoutWithoutOut) {
  const auto r = run_kbench("report " + fixture_arg("kbench_h200.json") + " " +
                            fixture_arg("torch_h200.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# kbench report", 0), 0u) << r.out;
}

TEST(ReportCommand, OutWritesTheMarkdownFile) {
  const fs::path dir = fresh_temp_dir();
  const fs::path target = dir / "SUMMARY.md";
  const auto r = run_kbench("report " + fixture_arg("kbench_h200.json") + " " +
                            fixture_arg("torch_h200.json") + " --out " + shell_quoted(target));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const std::string written = read_file(target);
  EXPECT_EQ(written.rfind("# kbench report", 0), 0u) << written;
  EXPECT_NE(written.find("## softmax"), std::string::npos);
  // Nothing but the report is left behind (the temporary file was renamed, not copied).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kbench
