#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "core/errors.hpp"
#include "core/shape.hpp"
#include "core/stats.hpp"
#include "report/grid_report.hpp"
#include "report/legend.hpp"
#include "report/markdown.hpp"
#include "report/probe_report.hpp"
#include "report/spec_report.hpp"
#include "report/tolerance_report.hpp"

namespace kbench {
namespace {

using nlohmann::json;

constexpr const char* kMissing = "—";

std::string format(const char* pattern, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, value);
  return buf;
}

// Three significant figures or so, whatever the magnitude: 3.21, 45.6, 789, 12345.
std::string format_us(double us) {
  if (!std::isfinite(us)) return kMissing;
  return format(us < 10 ? "%.2f" : us < 1000 ? "%.1f" : "%.0f", us);
}

std::string json_string(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// Rows sort by size, then dtype in the usual order, then cold before warm, events before graph.
int dtype_rank(const std::string& dtype) {
  if (dtype == "float32") return 0;
  if (dtype == "float16") return 1;
  if (dtype == "bfloat16") return 2;
  return 3;
}

// A table row: one case in one mode. Where the files hold one shape and mode at more than one
// set of op parameters (rmsnorm_backward with and without dh), the parameters are part of the
// row, so that each is a row of its own rather than one shown in place of the other; elsewhere
// they are left out, so that records that carry none (the PyTorch script's) share the row.
struct RowKey {
  std::vector<std::int64_t> shape;
  std::string params, dtype, cache, timer;
};

// "dh=0 eps=1e-06 frozen=0": the record's parameters in name order, or empty.
std::string params_text(const std::map<std::string, double>& params) {
  std::string text;
  for (const auto& [name, value] : params) text += (text.empty() ? "" : " ") + name + "=" + format("%g", value);
  return text;
}

bool operator<(const RowKey& a, const RowKey& b) {
  auto elements = [](const RowKey& k) {
    return std::accumulate(k.shape.begin(), k.shape.end(), std::int64_t{1}, std::multiplies<>());
  };
  return std::make_tuple(elements(a), a.shape, a.params, dtype_rank(a.dtype), a.dtype, a.cache, a.timer) <
         std::make_tuple(elements(b), b.shape, b.params, dtype_rank(b.dtype), b.dtype, b.cache, b.timer);
}

std::string cell_text(const Record& r) {
  std::string text = format_us(r.median_us) + " us";
  if (r.q3_us > r.q1_us) text += " (IQR " + format_us(r.q3_us - r.q1_us) + ")";
  text += ", ";
  text += r.flops > 0 ? format("%.1f", r.tflops > 0 ? r.tflops : r.flops / r.median_us / 1e6) +
                            " TFLOP/s"
                      : format("%.0f", r.gbps > 0 ? r.gbps : r.bytes / r.median_us / 1e3) +
                            " GB/s";
  if (!r.check.passed) text += " (check failed)";
  return text;
}

std::string device_summary(const json& device) {
  std::string text = json_string(device, "name");
  std::vector<std::string> details;
  if (auto cc = json_string(device, "cc"); !cc.empty()) details.push_back("cc " + cc);
  if (auto sms = json_string(device, "sms"); !sms.empty()) details.push_back(sms + " SMs");
  if (device.contains("l2_bytes") && device["l2_bytes"].is_number())
    details.push_back("L2 " + format("%.0f", device["l2_bytes"].get<double>() / (1 << 20)) +
                      " MiB");
  if (auto uuid = json_string(device, "uuid"); !uuid.empty()) details.push_back(uuid);
  std::string driver = json_string(device, "driver_version");
  if (driver.empty()) driver = json_string(device, "driver");
  if (!driver.empty()) details.push_back("driver " + driver);
  for (std::size_t i = 0; i < details.size(); ++i) text += (i ? ", " : " (") + details[i];
  return details.empty() ? text : text + ")";
}

std::string git_summary(const json& meta) {
  const json git = meta.is_object() ? meta.value("git", json::object()) : json::object();
  std::string commit = json_string(git, "commit");
  if (commit.empty()) return kMissing;
  if (commit.size() > 12) commit.resize(12);
  return git.value("dirty", false) ? commit + " (dirty)" : commit;
}

// What each column of the report's tables is: each table's legend is made from these.
const ColumnDefinitions& report_columns() {
  static const ColumnDefinitions definitions({
      // The files read.
      {"file", "the result file, as named on the command line"},
      {"experiment", "the experiment that wrote it (sweep, probe, grid, ...)"},
      {"tool", "what wrote it: kbench, or the tool its meta.tool names (the PyTorch script)"},
      {"started", "when the run began (meta.started, UTC)"},
      {"finished", "when the run ended (meta.finished, UTC)"},
      {"git", "the commit the run measured, its first 12 hex digits; \"(dirty)\": the tree differed from it"},
      {"records", "the records in the file, before the --cache and --timer filters"},
      // The timer floors: an empty kernel, timed as the records are.
      {"start", "an empty kernel's median sample before preparation, in us"},
      {"before", "the same just before the visits, in us"},
      {"after", "the same after the visits, in us"},
      {"in the visits", "the median of the empty kernel's samples taken in every visit, in us, then in brackets the "
                        "least and the greatest median of one visit's"},
      // An op's table: a row per case and mode.
      {"shape", "the case's shape (elements, rows x columns, or M x N x K)"},
      {"params", "the op's parameters (name=value), shown where the files hold one shape and mode at more than one "
                 "set of them"},
      {"dtype", "the element type of the inputs and outputs"},
      {"cache", "cold: L2 flushed or the inputs rotated before each sample; warm: the inputs left in L2 by the "
                "sample before"},
      {"timer", "events: a CUDA event pair around each launch; graph: launches replayed from one CUDA graph, per "
                "launch; cupti: the kernels' own time from CUPTI's activity records"},
      {"<variant>", "one of kbench's variants: the median of its samples in us (IQR: the third quartile less the "
                    "first, where not 0), then the bytes the op must move over that median in GB/s (10^9 bytes/s), or "
                    "its flops over it in TFLOP/s for ops that count flops; \"(check failed)\": its check failed"},
      {"<baseline>", "a baseline (a vendor or composition kernel, or another tool's run such as PyTorch's), its cell "
                     "as a variant's"},
      {"best", "the kbench variant (not a baseline) with the least median among those that passed their check"},
      {"best vs <baseline>", "the baseline's median over the best variant's median: above 1, kbench is faster; where "
                             "both were timed in the same visits of one run, [lo-hi, c%] is the order-statistic "
                             "interval of the per-visit ratios with its exact coverage (75% at 3 visits, 93.75% at 5)"},
      {"fastest", "the variant with the least median among all that passed their check, baselines included"},
      {"best / copy", "the best variant's GB/s as a percentage of the fastest copy variant's GB/s at the run's largest "
                      "copy, in the same cache mode and timer (its record's copy_fraction)"},
      {"best / same traffic", "the best variant's GB/s as a percentage of the fastest stream kernel with the op's own "
                              "read:write mix (\"2:1\") moving the same bytes in the same run, cache mode and timer"},
  });
  return definitions;
}

// A markdown table: its header and rule, then the rows; the columns' legend goes under it.
std::string table_head(const std::vector<ShownColumn>& columns) {
  return markdown_row(ColumnDefinitions::titles(columns)) + markdown_row(std::vector<std::string>(columns.size(), "---"));
}

std::string columns_legend(const std::vector<ShownColumn>& columns) {
  return "\nColumns:\n\n" + report_columns().legend(columns);
}

}  // namespace

bool ReportFilter::keeps(const Record& r) const {
  return (cache == "all" || r.cache == cache) && (timer == "all" || r.timer == timer);
}

void require_same_device(const std::vector<ReportInput>& inputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t j = i + 1; j < inputs.size(); ++j) {
      const json& a = inputs[i].result.device;
      const json& b = inputs[j].result.device;
      const std::string uuid_a = json_string(a, "uuid"), uuid_b = json_string(b, "uuid");
      const bool by_uuid = !uuid_a.empty() && !uuid_b.empty();
      const bool same = by_uuid ? uuid_a == uuid_b : json_string(a, "name") == json_string(b, "name");
      if (!same)
        throw UsageError("refusing to compare " + inputs[i].path + " and " + inputs[j].path +
                         ": they were measured on different devices (" +
                         (by_uuid ? uuid_a + " vs " + uuid_b
                                  : "'" + json_string(a, "name") + "' vs '" +
                                        json_string(b, "name") + "'") +
                         ")");
    }
  }
}

std::string op_table(const std::string& op, const std::vector<Record>& records, const std::vector<int>& file_of) {
  // The file each record came from, by address: visits pair only within one run.
  std::map<const Record*, int> origin;
  for (std::size_t i = 0; i < records.size() && i < file_of.size(); ++i) origin[&records[i]] = file_of[i];
  const auto same_run = [&](const Record* a, const Record* b) {
    const auto ia = origin.find(a), ib = origin.find(b);
    return ia != origin.end() && ib != origin.end() && ia->second == ib->second;
  };
  // cells[row][variant]; a later record of the same cell replaces an earlier one.
  std::map<RowKey, std::map<std::string, const Record*>> cells;
  std::set<std::string> own_variants, baselines;
  int replaced = 0;
  // The distinct non-empty parameter sets of each shape and mode.
  std::map<RowKey, std::set<std::string>> param_sets;
  for (const Record& r : records)
    if (r.op == op && !r.params.empty())
      param_sets[RowKey{r.shape, "", r.dtype, r.cache, r.timer}].insert(params_text(r.params));
  const bool has_params = std::any_of(param_sets.begin(), param_sets.end(), [](const auto& kv) { return kv.second.size() > 1; });
  for (const Record& r : records) {
    if (r.op != op) continue;
    (r.baseline ? baselines : own_variants).insert(r.variant);
    RowKey key{r.shape, "", r.dtype, r.cache, r.timer};
    if (param_sets[key].size() > 1) key.params = params_text(r.params);
    const Record*& slot = cells[key][r.variant];
    if (slot) ++replaced;
    slot = &r;
  }

  std::vector<ShownColumn> header = {{"shape"}, {"dtype"}, {"cache"}, {"timer"}};
  if (has_params) header.insert(header.begin() + 1, ShownColumn{"params"});
  for (const auto& v : own_variants) header.push_back({v, "<variant>"});
  for (const auto& v : baselines) header.push_back({v, "<baseline>"});
  header.push_back({"best"});
  for (const auto& b : baselines) header.push_back({"best vs " + b, "best vs <baseline>"});
  header.push_back({"fastest"});
  header.push_back({"best / copy"});
  header.push_back({"best / same traffic"});
  const std::string legend = columns_legend(header);  // first: a column without a definition throws

  std::string out = "## " + markdown_text(op) + "\n\n" + table_head(header);
  for (const auto& [key, variants] : cells) {
    std::vector<std::string> row = {shape_string(key.shape), key.dtype, key.cache, key.timer};
    if (has_params) row.insert(row.begin() + 1, key.params);
    auto cell = [&](const std::string& v) -> const Record* {
      auto it = variants.find(v);
      return it == variants.end() ? nullptr : it->second;
    };
    for (const auto& v : own_variants) row.push_back(cell(v) ? cell_text(*cell(v)) : kMissing);
    for (const auto& v : baselines) row.push_back(cell(v) ? cell_text(*cell(v)) : kMissing);

    // The best of kbench's own variants; one that failed its check can't be best.
    const Record* best = nullptr;
    for (const auto& v : own_variants) {
      const Record* r = cell(v);
      if (r && r->check.passed && std::isfinite(r->median_us) && r->median_us > 0 &&
          (!best || r->median_us < best->median_us))
        best = r;
    }
    row.push_back(best ? best->variant : kMissing);
    for (const auto& b : baselines) {
      const Record* base = cell(b);
      if (!best || !base || !std::isfinite(base->median_us)) {
        row.push_back(kMissing);
        continue;
      }
      std::string ratio = format("%.2f", base->median_us / best->median_us) + "x";
      // Timed in the same visits of one run: the per-visit ratios' order-statistic interval.
      if (same_run(best, base)) {
        const PairedRatio p = paired_ratio(base->samples_us, base->sample_visits, best->samples_us, best->sample_visits);
        if (p.visits >= 2)
          ratio += " [" + format("%.2f", p.lo) + "-" + format("%.2f", p.hi) + ", " + format("%.0f", 100 * p.coverage) +
                   "%]";
      }
      row.push_back(ratio);
    }
    // The fastest of every variant that passed its check, baselines included.
    const Record* fastest = nullptr;
    for (const auto& [name, r] : variants)
      if (r->check.passed && std::isfinite(r->median_us) && r->median_us > 0 &&
          (!fastest || r->median_us < fastest->median_us))
        fastest = r;
    row.push_back(fastest ? fastest->variant : kMissing);
    row.push_back(best && best->copy_fraction > 0
                      ? format("%.0f", 100 * best->copy_fraction) + "%"
                      : kMissing);
    // The fraction of the stream of the op's own mix at the same bytes, and the mix.
    const bool roofed = best && best->roofline.is_object() && best->roofline.value("fraction", 0.0) > 0;
    row.push_back(roofed ? format("%.0f", 100 * best->roofline["fraction"].get<double>()) + "% of " +
                               best->roofline.value("mix", std::string("?"))
                         : kMissing);
    out += markdown_row(row);
  }
  if (replaced > 0) {
    out += "\n";
    out += std::to_string(replaced);
    out += " cell(s) were measured in more than one file; the later file's is shown.\n";
  }
  return out + legend + "\n";
}

// Each file's extra.timer_floor (the sweep's empty-kernel readings, after its visits) beside
// extra.timer_floor_start and extra.timer_floor_before (the same before preparation and before
// the visits, where the file has them): the least any of its records can show, worth having
// beside the small cases, and whether it held still. Nothing when no file has them.
std::string timer_floors(const std::vector<ReportInput>& inputs) {
  const auto floor_of = [](const nlohmann::json& f) {
    return f.is_object() && f.contains("median_us") && f["median_us"].is_number()
               ? format("%.3f us", f["median_us"].get<double>())
               : std::string(kMissing);
  };
  std::string rows;
  for (const auto& in : inputs) {
    const auto it = in.result.extra.find("timer_floor");
    if (it == in.result.extra.end() || !it->is_array()) continue;
    // The same cache mode and timer's entry in another of the file's floor lists, or null.
    const auto same_mode = [&](const char* key, const nlohmann::json& f) {
      const auto list = in.result.extra.find(key);
      if (list != in.result.extra.end() && list->is_array())
        for (const auto& b : *list)
          if (b.is_object() && json_string(b, "cache") == json_string(f, "cache") &&
              json_string(b, "timer") == json_string(f, "timer"))
            return b;
      return nlohmann::json();
    };
    // The floors taken in the visits: their median, and the range of the per-visit medians.
    const auto in_visits = [&](const nlohmann::json& f) {
      const nlohmann::json v = same_mode("visit_floors", f);
      const nlohmann::json range = v.is_object() ? v.value("visit_median_range_us", nlohmann::json()) : nlohmann::json();
      if (floor_of(v) == kMissing || !range.is_array() || range.size() != 2 || !range[0].is_number() ||
          !range[1].is_number())
        return std::string(kMissing);
      return floor_of(v) + format(" (%.3f", range[0].get<double>()) + format("-%.3f)", range[1].get<double>());
    };
    for (const auto& f : *it) {
      if (!f.is_object() || !f.contains("median_us") || !f["median_us"].is_number()) continue;
      rows += markdown_row({in.path, json_string(f, "cache"), json_string(f, "timer"),
                         floor_of(same_mode("timer_floor_start", f)), floor_of(same_mode("timer_floor_before", f)),
                         floor_of(f), in_visits(f)});
    }
  }
  if (rows.empty()) return "";
  const std::vector<ShownColumn> columns = {{"file"},  {"cache"}, {"timer"},        {"start"},
                                            {"before"}, {"after"}, {"in the visits"}};
  return "Timer floors (an empty kernel timed in each cache mode and timer, the least a record can show):\n\n" +
         table_head(columns) + rows + columns_legend(columns) + "\n";
}

// The variants each file holds no records of because they failed: their check
// (extra.check_failures), or a fault in a worker process (extra.faults: an illegal address, a
// kernel past the step deadline; cli/workers.hpp). Nothing when none did.
std::string failed_variants(const std::vector<ReportInput>& inputs) {
  std::string lines;
  for (const auto& in : inputs)
    for (const char* block : {"check_failures", "faults"}) {
      const auto it = in.result.extra.find(block);
      if (it == in.result.extra.end() || !it->is_array()) continue;
      const bool fault = std::string(block) == "faults";
      for (const auto& f : *it) {
        if (!f.is_object()) continue;
        const std::string shape = f.contains("shape") ? f["shape"].dump() : "";
        const std::string why = fault ? "faulted in its " + json_string(f, "phase") + " step: " + json_string(f, "error")
                                      : "failed its check: " + json_string(f, "detail");
        lines += "- " + markdown_text(in.path) + ": " +
                 markdown_text(json_string(f, "op") + " " + json_string(f, "variant") + " " + json_string(f, "dtype") +
                               " " + shape + " " + why) +
                 "\n";
      }
    }
  return lines.empty() ? "" : "Failed, not timed:\n\n" + lines + "\n";
}

namespace {

bool analysed_experiment(const std::string& experiment) {
  return experiment == "probe" || experiment == "grid" || experiment == "fit" || experiment == "tolerance";
}

// `markdown(a)` for an analysis block of `in`. The blocks are the file's own text: one edited
// by hand (a count "x", a cell that is a number) is bad input, one line naming the file, not a
// JSON type error out of the middle of the report.
template <class Render>
std::string rendered(const ReportInput& in, Render markdown, const json& a) {
  try {
    return markdown(a);
  } catch (const json::exception& e) {
    throw UsageError(in.path + ": extra." + in.result.experiment + " cannot be reported (" + e.what() + ")");
  }
}

// The analysis block of a probe (extra.probe.analysis), grid (extra.grid.analysis) or fit
// (extra.fit) as markdown, a file without one getting a line saying so; a tolerance probe's
// table of shares.
std::string analysis_markdown(const ReportInput& in) {
  const Result& r = in.result;
  // The tolerance probe's table is its records (untimed: no op table could show them).
  if (r.experiment == "tolerance") return "From " + markdown_text(in.path) + ":\n\n" + tolerance_markdown(r);
  const auto block = r.extra.find(r.experiment);
  const bool whole = r.experiment == "fit";  // extra.fit is the analysis itself
  if (block == r.extra.end() || (!whole && !block->contains("analysis")))
    return "From " + markdown_text(in.path) + ": no analysis in the file.\n\n";
  const json& a = whole ? *block : block->at("analysis");
  const std::string text = rendered(in, r.experiment == "probe"  ? probe_markdown
                                       : r.experiment == "grid" ? grid_markdown
                                                                : fit_markdown, a);
  return "From " + markdown_text(in.path) + ":\n\n" + text;
}

}  // namespace

std::string build_report(const std::vector<ReportInput>& inputs, const ReportFilter& filter) {
  require_same_device(inputs);

  std::string out = "# kbench report\n\n";
  if (!inputs.empty()) out += "Device: " + markdown_text(device_summary(inputs.front().result.device)) + "\n\n";
  out += "Shown: cache " + filter.cache + ", timer " + filter.timer + ". Each table's columns are explained under it; \"" +
         std::string(kMissing) + "\": not measured.\n\n";

  const std::vector<ShownColumn> file_columns = {{"file"},     {"experiment"}, {"tool"},   {"started"},
                                                 {"finished"}, {"git"},        {"records"}};
  out += table_head(file_columns);
  for (const auto& in : inputs) {
    std::string tool = json_string(in.result.meta, "tool");
    out += markdown_row({in.path, in.result.experiment, tool.empty() ? "kbench" : tool,
                      json_string(in.result.meta, "started"),
                      json_string(in.result.meta, "finished"), git_summary(in.result.meta),
                      std::to_string(in.result.records.size())});
  }
  out += columns_legend(file_columns);

  std::string warnings;
  for (const auto& in : inputs) {
    const json& load = in.result.load;
    if (!load.is_object() || !load.contains("warnings") || !load["warnings"].is_array()) continue;
    for (const auto& w : load["warnings"])
      warnings += "- " + markdown_text(in.path) + ": " + markdown_text(w.is_string() ? w.get<std::string>() : w.dump()) + "\n";
  }
  out += "\nLoad warnings: " + (warnings.empty() ? std::string("none\n") : "\n\n" + warnings);
  out += "\n";
  out += failed_variants(inputs);
  out += timer_floors(inputs);

  // A probe's records are one fixed kernel after many pauses, a grid's every plan at hundreds
  // of cells, a fit's none, a tolerance probe's untimed: their analyses say what they mean, so
  // they stand in for the tables.
  std::vector<Record> shown;
  std::vector<int> shown_file;  // the input each shown record came from
  for (std::size_t file = 0; file < inputs.size(); ++file) {
    const ReportInput& in = inputs[file];
    if (analysed_experiment(in.result.experiment)) {
      out += analysis_markdown(in);
      continue;
    }
    // A spec run's records are builds of one kernel: its analysis sets them beside their attributes.
    if (in.result.experiment == "spec") {
      const auto spec = in.result.extra.find("spec");
      if (spec != in.result.extra.end() && spec->contains("analysis"))
        out += "From " + markdown_text(in.path) + ":\n\n" + rendered(in, spec_markdown, spec->at("analysis"));
    }
    for (const auto& r : in.result.records)
      if (filter.keeps(r)) {
        shown.push_back(r);
        shown_file.push_back(static_cast<int>(file));
      }
  }
  if (shown.empty() && !inputs.empty() && std::all_of(inputs.begin(), inputs.end(), [](const ReportInput& in) {
        return analysed_experiment(in.result.experiment);
      }))
    return out;
  if (shown.empty()) return out + "No records match the filters.\n";

  std::set<std::string> ops;
  for (const auto& r : shown) ops.insert(r.op);
  if (ops.erase("copy")) out += op_table("copy", shown, shown_file);
  for (const auto& op : ops) out += op_table(op, shown, shown_file);
  return out;
}

}  // namespace kbench
