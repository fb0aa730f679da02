// JSON I/O for result schema v1. Reading checks the file against src/record/result.schema.json
// and names the first field that is missing or mistyped; writing is atomic and never
// overwrites an earlier run.
#include "record/result.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json_schema.hpp"
#include "core/subprocess.hpp"
#include "core/text.hpp"
#include "record/sha256.hpp"

namespace kbench {
namespace {

using nlohmann::json;

// The result format (compiled in: cmake/Schemas.cmake). Reading checks a file against it
// first, so the conversions below meet only the types and ranges it allows.
constexpr const char* kResultSchemaFile = "src/record/result.schema.json";

// JSON has no NaN or infinity; nlohmann writes them as null, so null reads back as NaN
// (a failed check can have max_err = NaN, and that must survive a round trip).
double number_or_nan(const json& v) {
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}

double number_at(const json& j, const char* key, double fallback = 0) {
  const auto it = j.find(key);
  return it == j.end() ? fallback : number_or_nan(*it);
}

std::vector<double> numbers_at(const json& j, const char* key) {
  std::vector<double> out;
  if (const auto it = j.find(key); it != j.end())
    for (const json& v : *it) out.push_back(number_or_nan(v));
  return out;
}

json object_or_null(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? json(nullptr) : *it;
}

Record record_of(const json& j) {
  Record r;
  r.op = j.at("op").get<std::string>();
  r.variant = j.at("variant").get<std::string>();
  r.baseline = j.at("baseline").get<bool>();
  r.dtype = j.at("dtype").get<std::string>();
  r.shape = j.at("shape").get<std::vector<std::int64_t>>();
  r.cache = j.at("cache").get<std::string>();
  r.timer = j.at("timer").get<std::string>();
  r.samples_us = numbers_at(j, "samples_us");
  r.median_us = number_at(j, "median_us");
  r.q1_us = number_at(j, "q1_us");
  r.q3_us = number_at(j, "q3_us");
  r.min_us = number_at(j, "min_us");
  r.bytes = number_at(j, "bytes");
  r.flops = number_at(j, "flops");
  r.gbps = number_at(j, "gbps");
  const json& check = j.at("check");
  r.check.passed = check.at("passed").get<bool>();
  r.check.max_err = number_at(check, "max_err");
  r.check.tolerance = number_at(check, "tolerance");
  r.check.detail = check.value("detail", "");

  r.timer_note = j.value("timer_note", "");
  r.launches_per_sample = j.value("launches_per_sample", r.launches_per_sample);
  r.sample_visits = j.value("sample_visits", std::vector<int>{});
  r.sample_clock_mhz = numbers_at(j, "sample_clock_mhz");
  r.sample_floor_us = numbers_at(j, "sample_floor_us");
  r.discarded_samples = j.value("discarded_samples", 0);
  r.tflops = number_at(j, "tflops");
  r.copy_fraction = number_at(j, "copy_fraction");
  r.params = j.value("params", std::map<std::string, double>{});
  r.plan = object_or_null(j, "plan");
  r.roofline = object_or_null(j, "roofline");
  r.tolerance_probe = object_or_null(j, "tolerance_probe");
  return r;
}

// "%.17g" (enough digits to read back the same double), "null" for NaN and infinities: the
// same text as Python's "%.17g" % x, so that both tools hash the same bytes.
std::string canonical_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

template <class T, class Format>
std::string joined(const std::vector<T>& values, const char* separator, Format format) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += separator;
    out += format(values[i]);
  }
  return out;
}

}  // namespace

std::string records_canonical_text(const std::vector<Record>& records) {
  const auto integer = [](auto v) { return std::to_string(v); };
  std::string text;
  for (const Record& r : records) {
    const std::vector<std::string> fields = {
        r.op, r.variant, r.baseline ? "1" : "0", r.dtype, joined(r.shape, "x", integer),
        r.cache, r.timer, joined(r.samples_us, ",", canonical_number),
        joined(r.sample_visits, ",", integer), canonical_number(r.median_us),
        canonical_number(r.q1_us), canonical_number(r.q3_us), canonical_number(r.min_us),
        canonical_number(r.bytes), canonical_number(r.flops), canonical_number(r.gbps),
        r.check.passed ? "1" : "0"};
    text += joined(fields, "\t", [](const std::string& f) { return f; }) + "\n";
  }
  return text;
}

std::string records_digest(const std::vector<Record>& records) {
  return sha256_hex(records_canonical_text(records));
}

json to_json(const Record& r) {
  json check = {
      {"passed", r.check.passed}, {"max_err", r.check.max_err}, {"tolerance", r.check.tolerance}};
  if (!r.check.detail.empty()) check["detail"] = r.check.detail;
  json j = {{"op", r.op},
            {"variant", r.variant},
            {"baseline", r.baseline},
            {"dtype", r.dtype},
            {"shape", r.shape},
            {"cache", r.cache},
            {"timer", r.timer},
            {"timer_note", r.timer_note},
            {"launches_per_sample", r.launches_per_sample},
            {"samples_us", r.samples_us},
            {"sample_visits", r.sample_visits},
            {"median_us", r.median_us},
            {"q1_us", r.q1_us},
            {"q3_us", r.q3_us},
            {"min_us", r.min_us},
            {"bytes", r.bytes},
            {"flops", r.flops},
            {"gbps", r.gbps},
            {"tflops", r.tflops},
            {"copy_fraction", r.copy_fraction},
            {"check", check}};
  if (!r.params.empty()) j["params"] = r.params;
  if (!r.sample_clock_mhz.empty()) j["sample_clock_mhz"] = r.sample_clock_mhz;
  if (r.discarded_samples > 0) j["discarded_samples"] = r.discarded_samples;
  if (!r.sample_floor_us.empty()) j["sample_floor_us"] = r.sample_floor_us;
  if (r.plan.is_object()) j["plan"] = r.plan;
  if (r.roofline.is_object()) j["roofline"] = r.roofline;
  if (r.tolerance_probe.is_object()) j["tolerance_probe"] = r.tolerance_probe;
  return j;
}

json to_json(const Result& r) {
  json records = json::array();
  for (const Record& rec : r.records) records.push_back(to_json(rec));
  json j = {{"schema", r.schema},     {"experiment", r.experiment}, {"meta", r.meta},
            {"device", r.device},     {"warmup", r.warmup},         {"load", r.load},
            {"manifest", r.manifest}, {"records", records}};
  if (!r.extra.empty()) j["extra"] = r.extra;
  j["integrity"] = {{"algorithm", "sha256"}, {"records", records_digest(r.records)}};
  return j;
}

void validate_result_json(const json& j, const std::string& where) {
  JsonSchema::embedded(kResultSchemaFile).validate(j, where);
}

Result result_from_json(const json& j, const std::string& where) {
  validate_result_json(j, where);
  Result r;
  r.schema = j.at("schema").get<std::string>();
  r.experiment = j.at("experiment").get<std::string>();
  r.meta = j.at("meta");
  r.device = j.at("device");
  r.warmup = j.at("warmup");
  r.load = j.at("load");
  r.manifest = j.at("manifest");
  if (j.contains("extra")) r.extra = j.at("extra");
  if (j.contains("integrity")) r.recorded_digest = j.at("integrity").at("records").get<std::string>();
  for (const json& record : j.at("records")) r.records.push_back(record_of(record));
  return r;
}

bool is_compressed_result(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  return name.size() > 8 && name.compare(name.size() - 8, 8, ".json.gz") == 0;
}

// The text of a result file; a .json.gz (archive/ keeps superseded results so) through gzip, as
// git is run for history: no library for a format read a few times per verify.
std::string result_file_text(const std::filesystem::path& file) {
  if (is_compressed_result(file)) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) throw UsageError("cannot read " + file.string());
    ProcessOptions options;
    options.timeout_s = 60;
    const ProcessResult p = run_process({"gzip", "-dc", "--", file.string()}, options);
    if (!p.started) throw UsageError("cannot read " + file.string() + ": gzip is not installed");
    if (!p.ok()) throw UsageError(file.string() + ": not a valid gzip file");
    return p.out;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("cannot read " + file.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Result read_result(const std::filesystem::path& file) {
  std::error_code ec;  // a name too long to look up is unreadable, not an internal error
  if (std::filesystem::is_directory(file, ec)) throw UsageError(file.string() + " is a directory, not a result file");
  const std::string text = result_file_text(file);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number past double's range
    throw UsageError(file.string() + ": not valid JSON: " + e.what());
  }
  return result_from_json(j, file.string());
}

// --- writing --------------------------------------------------------------------------------

void require_result_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  for (std::filesystem::path p = dir; !p.empty(); p = p.parent_path()) {
    if (std::filesystem::exists(p, ec)) {
      if (!std::filesystem::is_directory(p, ec))
        throw UsageError("cannot write results under " + dir.string() + ": " + p.string() + " is not a directory");
      return;
    }
    if (p == p.parent_path()) return;  // the root
  }
}

std::string result_text(const nlohmann::json& j) {
  // A record a line, every other top-level part on one line: indented throughout, a sample a
  // line made the files a third larger (a grid of 1126 records 1.61 MB against 1.21), and the
  // device machine takes at most 64 MiB of working tree. grep finds a record by its variant.
  std::string out = "{\n";
  bool first = true;
  for (const auto& [key, value] : j.items()) {
    out += first ? " " : ",\n ";
    first = false;
    out += nlohmann::json(key).dump() + ": ";
    if (key == "records" && value.is_array() && !value.empty()) {
      out += "[\n";
      for (std::size_t i = 0; i < value.size(); ++i) out += "  " + value[i].dump() + (i + 1 < value.size() ? ",\n" : "\n");
      out += " ]";
    } else {
      out += value.dump();
    }
  }
  return out + "\n}\n";
}

std::filesystem::path write_result(const Result& r, const std::filesystem::path& dir) {
  if (r.experiment.empty() || r.experiment.find_first_of("/\\") != std::string::npos)
    throw UsageError("cannot name a result file after experiment '" + r.experiment + "'");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create directory " + dir.string() + ": " + ec.message());
  const std::string text = result_text(to_json(r));
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::filesystem::path target =
        dir / (r.experiment + "-" + utc_now(/*compact=*/true) + "-" + random_hex6() + ".json");
    if (write_file_atomically(target, text, Overwrite::never)) return target;
  }
  throw UsageError("cannot find a free result name in " + dir.string());
}

}  // namespace kbench
