// `kbench report`: sets result files side by side (kbench's own runs and other tools' runs of
// the same ops, such as scripts/torch_baseline.py) as markdown tables, one per op.
//
// Everything here is a pure function of results already in memory, so the CPU tests build
// records by hand; only cmd_report.cpp reads and writes files.
#pragma once

#include <string>
#include <vector>

#include "record/result.hpp"

namespace kbench {

struct ReportInput {
  std::string path;  // as given on the command line: names the file in the report
  Result result;
};

// Which records a report shows: "all", or one cache mode / one timer.
struct ReportFilter {
  std::string cache = "all";  // "cold" | "warm" | "all"
  std::string timer = "all";  // "events" | "graph" | "all"
  bool keeps(const Record& r) const;
};

// Throws UsageError (one line) when two inputs come from different devices: compared by
// device.uuid when both files have one, else by device.name. Numbers from two GPUs set side by
// side would read as a kernel's speed-up when they are the hardware's.
void require_same_device(const std::vector<ReportInput>& inputs);

// One op's markdown table over records from any number of files: a row per (shape, dtype,
// cache, timer), a column per variant (median us and GB/s, or TFLOP/s when flops > 0; "—"
// where a variant has no record), then the best non-baseline variant, its speed-up over each
// baseline (baseline median / best median: above 1 means kbench is faster) and its fraction of
// the same run's copy bandwidth. Where two files hold the same cell, the later one is shown
// and a note under the table says so. Each "best vs" cell also gives the order-statistic
// interval of the per-visit ratios where both records come from one run (file_of[i]: the file
// of records[i]; visits of two runs do not pair), and a "fastest" column names the fastest of
// every variant, baselines included. Cells show the samples' IQR where it is not 0.
std::string op_table(const std::string& op, const std::vector<Record>& records, const std::vector<int>& file_of = {});

// The whole report: a header (files, device, dates, load warnings) and op_table for every op
// with records that pass `filter` (copy first: it is the ceiling the others are read against).
// Calls require_same_device first.
std::string build_report(const std::vector<ReportInput>& inputs, const ReportFilter& filter);

// Each file's timer floors (extra.timer_floor and, where the file has them, the floors taken at
// the start, before the visits and in the visits) as one markdown table, or "" when no file has
// any: `kbench report` and `kbench compare` print it beside their cases.
std::string timer_floors(const std::vector<ReportInput>& inputs);

}  // namespace kbench
