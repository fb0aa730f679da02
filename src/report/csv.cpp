#include "report/csv.hpp"

#include <cstdio>
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

std::string records_csv(const std::vector<ReportInput>& inputs, const ReportFilter& filter) {
  std::string out =
      "file,experiment,device,commit,op,variant,baseline,dtype,shape,params,cache,timer,samples,median_us,q1_us,"
      "q3_us,min_us,gbps,tflops,copy_fraction,check_passed,floor_us\n";
  for (const ReportInput& in : inputs) {
    const Result& r = in.result;
    const std::string device = text_of(r.device, "uuid").empty() ? text_of(r.device, "name") : text_of(r.device, "uuid");
    const std::string commit = r.meta.contains("git") ? text_of(r.meta.at("git"), "commit") : "";
    for (const Record& rec : r.records) {
      if (!filter.keeps(rec)) continue;
      const std::vector<std::string> fields{in.path,
                                            r.experiment,
                                            device,
                                            commit,
                                            rec.op,
                                            rec.variant,
                                            rec.baseline ? "1" : "0",
                                            rec.dtype,
                                            joined_shape(rec.shape),
                                            joined_params(rec.params),
                                            rec.cache,
                                            rec.timer,
                                            std::to_string(rec.samples_us.size()),
                                            number(rec.median_us),
                                            number(rec.q1_us),
                                            number(rec.q3_us),
                                            number(rec.min_us),
                                            number(rec.gbps),
                                            number(rec.tflops),
                                            number(rec.copy_fraction),
                                            rec.check.passed ? "1" : "0",
                                            // The median of its samples' visit floors; empty
                                            // for a record from before the per-visit floor.
                                            rec.sample_floor_us.empty() ? "" : number(quantile(rec.sample_floor_us, 0.5))};
      for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
      out += "\n";
    }
  }
  return out;
}

}  // namespace kbench
