// Result schema v1: one JSON file per run (see docs/schema.md and DESIGN.md). Other tools
// read these files, so field names here are a contract: add fields, never rename them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kbench {

inline constexpr const char* kResultSchema = "kbench/result/v1";

struct CheckInfo {
  bool passed = false;
  double max_err = 0;    // largest |out - ref| over all elements and outputs
  double tolerance = 0;  // the allowed error at that element (atol + rtol * |ref|)
  std::string detail;    // first failure, or empty
  // The largest |out - ref| / (atol + rtol |ref|) over every element of the outputs up to the
  // first failing one, that one included (infinity for a wrong NaN or infinity, a write past
  // the end, or outputs that differ between launches): above 1 exactly when the check failed.
  // What the tolerance probe reports; not written to records.
  double share = 0;
};

struct Record {
  std::string op;
  std::string variant;
  bool baseline = false;
  std::string dtype;                // "float32", "float16", "bfloat16"
  std::vector<std::int64_t> shape;
  std::string cache;                // "cold" | "warm"
  std::string timer;                // "events" | "graph" | "cupti"
  std::string timer_note;           // what the timer includes (launch overhead or not)
  int launches_per_sample = 1;      // graph: launches replayed per sample (time is per launch)
  std::vector<double> samples_us;   // every raw sample, in the order taken
  std::vector<int> sample_visits;   // the visit each sample belongs to (pairs variants)
  // The SM clock (MHz) read on the GPU before each sample's visit, and the samples discarded
  // because their visit began below the run's clock floor (extra.clock_filter). Empty and 0 in
  // results from before the filter, and then not written.
  std::vector<double> sample_clock_mhz;
  int discarded_samples = 0;
  // The floor of each sample's visit: the median of an empty kernel's samples taken in that visit
  // with the same cache mode and timer (harness/units.hpp), the least the sample could read then.
  // Empty in results from before the per-visit floor, and then not written.
  std::vector<double> sample_floor_us;
  double median_us = 0, q1_us = 0, q3_us = 0, min_us = 0;
  double bytes = 0, flops = 0;
  double gbps = 0;                  // bytes / median
  double tflops = 0;                // flops / median
  double copy_fraction = 0;         // gbps / the same run's copy gbps (same cache and timer); 0 if none
  // The same-traffic roofline (a sweep's, experiments/sweep.cpp): {"mix": "2:1", "elements": n
  // of each stream, "variant": the fastest stream variant there, "gbps": its GB/s, "fraction":
  // gbps / its gbps}, same cache and timer. Null where the op has no mix or the run no stream,
  // and then not written.
  nlohmann::json roofline = nullptr;
  std::map<std::string, double> params;  // the case's op parameters (eps, flags); empty if the op has none
  // The grid's records: the row plan's parameters (kind, threads, lanes, vecs, chunk, segments,
  // segment, blocks; the variant name spells the same). Null elsewhere, and then not written.
  nlohmann::json plan = nullptr;
  // The tolerance probe's records (experiment "tolerance"): {"share": the worst |out - ref| /
  // (atol + rtol |ref|) over its checks (null: infinite, a failure no tolerance measures),
  // "inputs": the input kind and "seed": the seed (0 .. N-1) that gave it, "checks": how many
  // ran}; shape and check are that worst check's. Null elsewhere, and then not written.
  nlohmann::json tolerance_probe = nullptr;
  CheckInfo check;
};

// The cache and timer of a record that was checked but not timed (the tolerance probe's): it
// has no samples and its statistics are 0, which verify holds it to.
inline constexpr const char* kUntimed = "none";
inline bool is_timed(const Record& r) { return r.timer != kUntimed; }

struct Result {
  std::string schema = kResultSchema;
  std::string experiment;
  nlohmann::json meta = nlohmann::json::object();      // argv, started, finished, host, git, seed, settings
  nlohmann::json device = nlohmann::json::object();    // name, cc, sms, l2_bytes, driver, cuda_runtime, cublas
  nlohmann::json warmup = nlohmann::json::object();    // ms, sm_clock_mhz
  nlohmann::json load = nlohmann::json::object();      // before, after, warnings
  nlohmann::json manifest = nlohmann::json::object();  // algorithm, files, measured
  nlohmann::json extra = nlohmann::json::object();     // experiment-specific blocks (kept verbatim)
  std::vector<Record> records;
  // integrity.records as read from a file; empty for files from before it. Writing always
  // puts a fresh digest of `records`, so this is what verify compares that digest with.
  std::string recorded_digest;
};

// The text the records digest is taken over, one line per record (docs/schema.md, "Integrity"):
// simple enough that another tool could write the same bytes (the PyTorch script once did; it
// now writes through the Python module, this code).
std::string records_canonical_text(const std::vector<Record>& records);
// SHA-256 hex of records_canonical_text: the "integrity": {"records": ...} of a result.
std::string records_digest(const std::vector<Record>& records);

nlohmann::json to_json(const Record& r);
// With "integrity": {"algorithm": "sha256", "records": records_digest(r.records)}.
nlohmann::json to_json(const Result& r);
// UsageError (one line, "<where>: <first problem>", the field named by its JSON pointer) when
// `j` is not a v1 result by src/record/result.schema.json: for every reader of result files
// (read_result; `kbench merge` too, before it combines anything).
void validate_result_json(const nlohmann::json& j, const std::string& where);
// `j` as a Result, after validate_result_json(j, where).
Result result_from_json(const nlohmann::json& j, const std::string& where = "result");

// A result file: <name>.json, or <name>.json.gz (gzip-compressed, as archive/ keeps them).
// UsageError (one line naming the file) when it cannot be read, is not JSON or not a v1
// result; every command that reads results goes through it.
Result read_result(const std::filesystem::path& file);
bool is_compressed_result(const std::filesystem::path& file);  // its name ends in .json.gz
// Writes <dir>/<experiment>-<UTC time>-<random>.json atomically (temporary file, flush,
// rename), creating dir if needed; never overwrites. Returns the path written.
std::filesystem::path write_result(const Result& r, const std::filesystem::path& dir);
// A result file's text: one line per record, one per other top-level part.
std::string result_text(const nlohmann::json& j);
// UsageError (one line) when a file stands where write_result would need a folder: `dir` or
// the first of its parents that exists. For a command to refuse its --out before it runs,
// rather than lose the run at the end; creates nothing.
void require_result_dir(const std::filesystem::path& dir);

}  // namespace kbench
