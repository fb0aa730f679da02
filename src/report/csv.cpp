#include "report/csv.hpp"

#include <cstdio>
#include <map>
#include <string>

#include "core/stats.hpp"

namespace kbench {

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string joined_shape(const std::vector<std::int64_t>& shape) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

std::string joined_params(const std::map<std::string, double>& params) {
  std::string s;
  for (const auto& [name, value] : params) s += (s.empty() ? "" : ";") + name + "=" + number(value);
  return s;
}

std::string text_of(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : "";
}

}  // namespace

std::string csv_field(const std::string& value) {
  std::string v = value;
  if (!v.empty() && (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@')) {
    // A negative number is data, not a formula.
    const bool numeric = v.size() > 1 && v[0] == '-' && v.find_first_not_of("0123456789.eE+-") == std::string::npos;
    if (!numeric) v = "'" + v;
  }
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string quoted = "\"";
  for (const char c : v) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

namespace {

const std::vector<std::string> kColumns = {
    "file",   "experiment", "device", "commit", "op",     "variant",       "baseline",     "dtype",
    "shape",  "params",     "cache",  "timer",  "samples", "median_us",    "q1_us",        "q3_us",
    "min_us", "gbps",       "tflops", "copy_fraction", "check_passed", "floor_us"};

// Each record that passes `filter` as its row: a value per column of kColumns, typed as JSON
// holds it (the CSV writes the same values as text).
std::vector<std::vector<nlohmann::json>> record_rows(const std::vector<ReportInput>& inputs, const ReportFilter& filter) {
  std::vector<std::vector<nlohmann::json>> rows;
  for (const ReportInput& in : inputs) {
    const Result& r = in.result;
    const std::string device = text_of(r.device, "uuid").empty() ? text_of(r.device, "name") : text_of(r.device, "uuid");
    const std::string commit = r.meta.contains("git") ? text_of(r.meta.at("git"), "commit") : "";
    for (const Record& rec : r.records) {
      if (!filter.keeps(rec)) continue;
      rows.push_back({in.path,
                                            r.experiment,
                                            device,
                                            commit,
                                            rec.op,
                                            rec.variant,
                                            rec.baseline,
                                            rec.dtype,
                                            rec.shape,
                                            rec.params,
                                            rec.cache,
                                            rec.timer,
                                            rec.samples_us.size(),
                                            rec.median_us,
                                            rec.q1_us,
                                            rec.q3_us,
                                            rec.min_us,
                                            rec.gbps,
                                            rec.tflops,
                                            rec.copy_fraction,
                                            rec.check.passed,
                                            // The median of its samples' visit floors; null for
                                            // a record from before the per-visit floor.
                                            rec.sample_floor_us.empty() ? nlohmann::json()
                                                                        : nlohmann::json(quantile(rec.sample_floor_us, 0.5))});
    }
  }
  return rows;
}

// A row's value as the CSV writes it: shapes "MxNxK", params "name=value;...", booleans 1 or 0,
// numbers to six significant digits, null empty.
std::string csv_text(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number()) return number(v.get<double>());
  if (v.is_array()) return joined_shape(v.get<std::vector<std::int64_t>>());
  return joined_params(v.get<std::map<std::string, double>>());
}

}  // namespace

std::string records_csv(const std::vector<ReportInput>& inputs, const ReportFilter& filter) {
  std::string out;
  for (std::size_t i = 0; i < kColumns.size(); ++i) out += (i ? "," : "") + kColumns[i];
  out += "\n";
  for (const auto& row : record_rows(inputs, filter)) {
    for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_field(csv_text(row[i]));
    out += "\n";
  }
  return out;
}

nlohmann::json records_json(const std::vector<ReportInput>& inputs, const ReportFilter& filter) {
  nlohmann::json records = nlohmann::json::array();
  for (const auto& row : record_rows(inputs, filter)) {
    nlohmann::json record = nlohmann::json::object();
    for (std::size_t i = 0; i < row.size(); ++i) record[kColumns[i]] = row[i];
    records.push_back(record);
  }
  return {{"schema", "kbench/records/v1"}, {"records", records}};
}

}  // namespace kbench
