// JSON I/O for result schema v1. Reading validates every required field and names the first
// one that is missing or mistyped; writing is atomic and never overwrites an earlier run.
#include "record/result.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <type_traits>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/subprocess.hpp"
#include "core/text.hpp"
#include "record/sha256.hpp"

namespace kbench {
namespace {

using nlohmann::json;

// JSON has no NaN or infinity; nlohmann writes them as null, so null reads back as NaN
// (a failed check can have max_err = NaN, and that must survive a round trip).
double number_or_nan(const json& v) {
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}

// Looks up obj[key] and checks its type; `where` names the object in the error ("record 3").
class FieldReader {
 public:
  FieldReader(const json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  const json& require(const char* key, json::value_t type, const char* type_name) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) fail(key, "is missing");
    if (it->type() != type) fail(key, std::string("must be ") + type_name);
    return *it;
  }
  std::string string(const char* key) const {
    return require(key, json::value_t::string, "a string").get<std::string>();
  }
  bool boolean(const char* key) const {
    return require(key, json::value_t::boolean, "true or false").get<bool>();
  }
  double number(const char* key) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) fail(key, "is missing");
    if (!it->is_number() && !it->is_null()) fail(key, "must be a number");
    return number_or_nan(*it);
  }
  const json& object(const char* key) const {
    return require(key, json::value_t::object, "an object");
  }
  const json& array(const char* key) const {
    return require(key, json::value_t::array, "an array");
  }
  std::vector<double> numbers(const char* key) const {
    std::vector<double> out;
    for (const json& v : array(key)) {
      if (!v.is_number() && !v.is_null()) fail(key, "must hold only numbers");
      out.push_back(number_or_nan(v));
    }
    return out;
  }
  template <class Int>
  std::vector<Int> integers(const char* key) const {
    std::vector<Int> out;
    for (const json& v : array(key)) out.push_back(integer_value<Int>(v, key, "must hold only integers"));
    return out;
  }
  // A whole number that fits Int, or fail: nlohmann's get<int> of 1.4e50 is undefined
  // behaviour (UBSan, under the result fuzzer), and of 2^40 a silent wrap.
  template <class Int>
  Int integer_value(const json& v, const char* key, const char* what) const {
    if (!v.is_number_integer()) fail(key, what);
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())
                               : v.get<std::int64_t>() < static_cast<std::int64_t>(std::numeric_limits<Int>::min()) ||
                                     v.get<std::int64_t>() > static_cast<std::int64_t>(std::numeric_limits<Int>::max()))
      fail(key, "holds a number out of range");
    return static_cast<Int>(v.get<std::int64_t>());
  }
  // Optional fields keep the default of the struct when absent.
  template <class T>
  void optional(const char* key, T& out) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) return;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      out = integer_value<T>(*it, key, "must be a whole number");
      return;
    }
    try {
      out = it->get<T>();
    } catch (const json::exception&) {
      fail(key, "has the wrong type");
    }
  }
  void optional_number(const char* key, double& out) const {
    if (obj_.contains(key)) out = number(key);
  }
  FieldReader nested(const char* key) const { return {object(key), where_ + "." + key}; }

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw UsageError(where_ + ": field '" + key + "' " + what);
  }

 private:
  const json& obj_;
  std::string where_;
};

// `index` names the record in errors, with its op and variant when those are readable.
Record record_at(const json& j, const std::string& index) {
  if (!j.is_object()) throw UsageError(index + " must be an object");
  std::string where = index;
  if (j.contains("op") && j["op"].is_string() && j.contains("variant") && j["variant"].is_string())
    where += " (" + j["op"].get<std::string>() + "/" + j["variant"].get<std::string>() + ")";
  FieldReader f(j, where);
  Record r;
  r.op = f.string("op");
  r.variant = f.string("variant");
  r.baseline = f.boolean("baseline");
  r.dtype = f.string("dtype");
  r.shape = f.integers<std::int64_t>("shape");
  r.cache = f.string("cache");
  r.timer = f.string("timer");
  r.samples_us = f.numbers("samples_us");
  r.median_us = f.number("median_us");
  r.q1_us = f.number("q1_us");
  r.q3_us = f.number("q3_us");
  r.min_us = f.number("min_us");
  r.bytes = f.number("bytes");
  r.flops = f.number("flops");
  r.gbps = f.number("gbps");
  FieldReader check = f.nested("check");
  r.check.passed = check.boolean("passed");
  r.check.max_err = check.number("max_err");
  r.check.tolerance = check.number("tolerance");
  check.optional("detail", r.check.detail);

  f.optional("timer_note", r.timer_note);
  f.optional("launches_per_sample", r.launches_per_sample);
  if (j.contains("sample_visits")) r.sample_visits = f.integers<int>("sample_visits");
  if (j.contains("sample_clock_mhz")) r.sample_clock_mhz = f.numbers("sample_clock_mhz");
  if (j.contains("sample_floor_us")) r.sample_floor_us = f.numbers("sample_floor_us");
  f.optional("discarded_samples", r.discarded_samples);
  f.optional_number("tflops", r.tflops);
  f.optional_number("copy_fraction", r.copy_fraction);
  f.optional("params", r.params);
  if (j.contains("plan")) r.plan = f.object("plan");
  if (j.contains("roofline")) r.roofline = f.object("roofline");
  if (j.contains("tolerance_probe")) r.tolerance_probe = f.object("tolerance_probe");
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

Record record_from_json(const json& j) { return record_at(j, "record"); }

Result result_from_json(const json& j) {
  if (!j.is_object()) throw UsageError("a result must be a JSON object");
  FieldReader f(j, "result");
  Result r;
  r.schema = f.string("schema");
  if (r.schema != kResultSchema)
    f.fail("schema", "is '" + r.schema + "', expected '" + kResultSchema + "'");
  r.experiment = f.string("experiment");
  r.meta = f.object("meta");
  r.device = f.object("device");
  r.warmup = f.object("warmup");
  r.load = f.object("load");
  r.manifest = f.object("manifest");
  if (j.contains("extra")) r.extra = f.object("extra");
  if (j.contains("integrity")) {
    const FieldReader integrity = f.nested("integrity");
    if (integrity.string("algorithm") != "sha256")
      integrity.fail("algorithm", "must be \"sha256\"");
    r.recorded_digest = integrity.string("records");
  }
  const json& records = f.array("records");
  for (std::size_t i = 0; i < records.size(); ++i)
    r.records.push_back(record_at(records[i], "record " + std::to_string(i)));
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
    const ProcessResult p = run_process({"gzip", "-dc", "--", file.string()}, {.timeout_s = 60});
    if (!p.started) throw UsageError("cannot read " + file.string() + ": gzip is not installed");
    if (!p.ok()) throw UsageError(file.string() + ": not a valid gzip file");
    return p.out;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("cannot read " + file.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Result read_result(const std::filesystem::path& file) {
  if (std::filesystem::is_directory(file)) throw UsageError(file.string() + " is a directory, not a result file");
  const std::string text = result_file_text(file);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number past double's range
    throw UsageError(file.string() + ": not valid JSON: " + e.what());
  }
  try {
    return result_from_json(j);
  } catch (const UsageError& e) {
    throw UsageError(file.string() + ": " + e.what());
  }
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
