#include "report/run_table.hpp"

#include <algorithm>
#include <vector>

#include "core/shape.hpp"
#include "core/text.hpp"
#include "report/csv.hpp"
#include "report/legend.hpp"
#include "report/markdown.hpp"

namespace kbench {
namespace {

struct Column {
  ShownColumn shown;
  bool number;  // aligned right
};

// What each column is: the legend under the tables is made from these.
const ColumnDefinitions& run_columns() {
  static const ColumnDefinitions definitions({
      {"variant", "the variant timed; \"(baseline)\": a vendor or composition kernel (cub, memcpy, eager) set "
                  "beside kbench's own"},
      {"dtype", "the element type of the inputs and outputs"},
      {"shape", "the case's shape (elements, rows x columns, or M x N x K)"},
      {"cache", "cold: L2 flushed or the inputs rotated before each sample; warm: the inputs left in L2 by the "
                "sample before"},
      {"timer", "events: a CUDA event pair around each launch; graph: launches replayed from one CUDA graph, per "
                "launch; cupti: the kernels' own time from CUPTI's activity records"},
      {"median_us", "the median of the variant's kept samples (every visit's), in microseconds per launch"},
      {"GB/s", "the bytes the op must move (each input read once, each output written once) over median_us, in "
               "10^9 bytes per second"},
      {"copy%", "GB/s as a percentage of the fastest copy variant's GB/s at the run's largest copy, in the same "
                "cache mode and timer"},
      {"roof%", "GB/s as a percentage of the fastest stream kernel with the op's own read:write mix moving the "
                "same bytes in the same run, cache mode and timer; blank where none stands for it"},
  });
  return definitions;
}

// The variants that were not timed because they failed: their check, or a fault in a worker
// (--isolate, --devices: extra.faults). One line each, after the tables.
std::string failed_lines(const Result& r) {
  std::string out;
  for (const std::string block : {"check_failures", "faults"}) {
    const auto it = r.extra.find(block);
    if (it == r.extra.end() || !it->is_array()) continue;
    const bool fault = block == "faults";
    for (const auto& f : *it) {
      const std::string why = fault ? "fault in its " + f.value("phase", "") + " step" : "check";
      out += "FAILED (" + why + "): " + printable(f.value("op", "")) + " " + printable(f.value("variant", "")) + " " +
             printable(f.value("dtype", "")) + " " + shape_string(f.value("shape", Shape{})) + ": " +
             printable(f.value(fault ? "error" : "detail", ""), 300) + "\n";
    }
  }
  return out;
}

std::string markdown_tables(const Result& r) {
  const std::vector<Column> columns = {{{"variant"}, false},  {{"dtype"}, false}, {{"shape"}, false},
                                       {{"cache"}, false},    {{"timer"}, false}, {{"median_us"}, true},
                                       {{"GB/s"}, true},      {{"copy%"}, true},  {{"roof%"}, true}};
  std::vector<ShownColumn> shown;
  for (const Column& c : columns) shown.push_back(c.shown);
  const std::string legend = run_columns().legend(shown);  // before any table: a column without one throws
  // The ops in the order their first record came, each with its records in run order.
  std::vector<std::string> ops;
  for (const Record& rec : r.records)
    if (std::find(ops.begin(), ops.end(), rec.op) == ops.end()) ops.push_back(rec.op);
  std::string out;
  for (const std::string& op : ops) {
    std::vector<std::vector<std::string>> rows;
    for (const Record& rec : r.records) {
      if (rec.op != op) continue;
      const bool roofline = rec.roofline.is_object() && rec.roofline.contains("fraction");
      rows.push_back({rec.variant + (rec.baseline ? " (baseline)" : ""), rec.dtype, shape_string(rec.shape),
                      rec.cache, rec.timer, format_number("%.3f", rec.median_us), format_number("%.1f", rec.gbps),
                      format_number("%.1f", 100.0 * rec.copy_fraction),
                      roofline ? format_number("%.1f", 100.0 * rec.roofline.value("fraction", 0.0)) : ""});
    }
    for (auto& row : rows)
      for (auto& cell : row) cell = markdown_text(cell);
    std::vector<std::size_t> width(columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      width[c] = columns[c].shown.title.size();
      for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
      std::string s = "|";
      for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::string pad(width[c] - std::min(width[c], cells[c].size()), ' ');
        s += " " + (columns[c].number ? pad + cells[c] : cells[c] + pad) + " |";
      }
      return s + "\n";
    };
    out += "### " + markdown_text(op) + "\n\n";
    out += line(ColumnDefinitions::titles(shown));
    std::string rule = "|";
    for (std::size_t c = 0; c < columns.size(); ++c)
      rule += (columns[c].number ? std::string(width[c] + 1, '-') + ":" : ":" + std::string(width[c] + 1, '-')) + "|";
    out += rule + "\n";
    for (const auto& row : rows) out += line(row);
    out += "\n";
  }
  // Every op's table has the same columns: one legend under the last.
  if (!ops.empty()) out += "Columns:\n\n" + legend + "\n";
  return out + failed_lines(r);
}

}  // namespace

std::string run_table(const Result& r, const std::string& format, const std::string& written) {
  const std::vector<ReportInput> inputs = {{written, r}};
  if (format == "csv") return records_csv(inputs, ReportFilter{});
  if (format == "json") return records_json(inputs, ReportFilter{}).dump(2) + "\n";
  return markdown_tables(r);
}

}  // namespace kbench
