// Result files: a round trip keeps every field, names never collide, errors name the field,
// and a write never leaves anything but complete .json files behind.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <set>

#include "core/errors.hpp"
#include "record/result.hpp"
#include "record/sha256.hpp"
#include "cpu/run_command.hpp"
#include "record_temp_dir.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

Record sample_record() {
  Record r;
  r.op = "softmax";
  r.variant = "single_block";
  r.baseline = false;
  r.dtype = "float16";
  r.shape = {4096, 4096};
  r.cache = "cold";
  r.timer = "graph";
  r.timer_note = "per launch, launch overhead amortised";
  r.launches_per_sample = 20;
  r.samples_us = {10.5, 10.25, 11.0};
  r.sample_visits = {0, 1, 2};
  r.median_us = 10.5;
  r.q1_us = 10.375;
  r.q3_us = 10.75;
  r.min_us = 10.25;
  r.bytes = 67108864;
  r.flops = 83886080;
  r.gbps = 6391.3;
  r.tflops = 7.99;
  r.copy_fraction = 0.91;
  r.check = {true, 0.0009765625, 0.001953125, ""};
  return r;
}

Result sample_result() {
  Result r;
  r.experiment = "sweep";
  r.meta = {{"argv", {"kbench", "run"}}, {"seed", 7}};
  r.device = {{"name", "H200"}, {"sms", 132}};
  r.warmup = {{"ms", 200}, {"sm_clock_mhz", 1980}};
  r.load = {{"before", nlohmann::json::object()},
            {"after", nlohmann::json::object()},
            {"warnings", nlohmann::json::array()}};
  r.manifest = {{"algorithm", "sha256"}, {"files", {{"src/main.cpp", "00"}}}};
  r.extra = {{"row_plan", {{"chunk", 4096}}}};
  r.records = {sample_record(), sample_record()};
  r.records[1].variant = "cub";
  r.records[1].baseline = true;
  r.records[1].check = {false, std::nan(""), 0.5, "row 3 col 7: got nan"};
  return r;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path());
  return out;
}

TEST(ResultIo, RoundTripKeepsEveryField) {
  test::TempDir dir;
  Result written = sample_result();
  written.records[0].sample_floor_us = {2.75, 2.5, std::nan("")};  // a visit without a floor: null
  const fs::path file = write_result(written, dir.path() / "results" / "sweep");
  const Result read = read_result(file);
  EXPECT_EQ(to_json(read).dump(), to_json(written).dump());
  ASSERT_EQ(read.records.size(), 2u);
  EXPECT_EQ(read.records[0].shape, (std::vector<std::int64_t>{4096, 4096}));
  EXPECT_EQ(read.records[0].sample_visits, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(read.records[0].launches_per_sample, 20);
  ASSERT_EQ(read.records[0].sample_floor_us.size(), 3u);
  EXPECT_EQ(read.records[0].sample_floor_us[1], 2.5);
  EXPECT_TRUE(std::isnan(read.records[0].sample_floor_us[2]));
  EXPECT_FALSE(to_json(read.records[1]).contains("sample_floor_us"));  // absent where empty
  EXPECT_EQ(read.extra, written.extra);
  // NaN (a failed check) survives as null.
  EXPECT_TRUE(std::isnan(read.records[1].check.max_err));
  EXPECT_EQ(read.records[1].check.detail, "row 3 col 7: got nan");
}

// The tolerance probe's records: untimed, with their share block; an infinite share is null.
TEST(ResultIo, UntimedRecordWithItsToleranceProbeBlockRoundTrips) {
  test::TempDir dir;
  Result written = sample_result();
  Record& r = written.records[0];
  r.cache = r.timer = kUntimed;
  r.samples_us.clear();
  r.sample_visits.clear();
  r.median_us = r.q1_us = r.q3_us = r.min_us = 0;
  r.tolerance_probe = {{"share", std::numeric_limits<double>::infinity()}, {"inputs", "large"}, {"seed", 17},
                       {"checks", 300}};
  EXPECT_FALSE(is_timed(r));
  EXPECT_TRUE(is_timed(written.records[1]));
  EXPECT_FALSE(to_json(written.records[1]).contains("tolerance_probe"));  // absent where null
  const Result read = read_result(write_result(written, dir.path()));
  EXPECT_EQ(to_json(read).dump(), to_json(written).dump());
  EXPECT_TRUE(read.records[0].tolerance_probe.at("share").is_null());
  EXPECT_EQ(read.records[0].tolerance_probe.at("inputs"), "large");
  EXPECT_TRUE(read.records[1].tolerance_probe.is_null());
  nlohmann::json j = to_json(written);
  j["records"][0]["tolerance_probe"] = 0.5;
  EXPECT_THROW(result_from_json(j), UsageError);  // an object or nothing
}

TEST(ResultIo, EmptyExtraIsOmitted) {
  Result r = sample_result();
  r.extra = nlohmann::json::object();
  EXPECT_FALSE(to_json(r).contains("extra"));
}

TEST(ResultIo, FileNameHasExperimentUtcTimeAndRandomPart) {
  test::TempDir dir;
  const fs::path file = write_result(sample_result(), dir.path());
  EXPECT_TRUE(std::regex_match(file.filename().string(),
                               std::regex(R"(sweep-\d{8}T\d{6}Z-[0-9a-f]{6}\.json)")))
      << file;
  EXPECT_EQ(file.parent_path(), dir.path());
}

TEST(ResultIo, WritesInTheSameSecondNeverOverwrite) {
  test::TempDir dir;
  std::set<fs::path> names;
  for (int i = 0; i < 20; ++i) names.insert(write_result(sample_result(), dir.path()));
  EXPECT_EQ(names.size(), 20u);
  EXPECT_EQ(files_in(dir.path()).size(), 20u);  // and no temporary file is left behind
}

TEST(ResultIo, FailedWriteLeavesNoFile) {
  test::TempDir dir;
  Result bad = sample_result();
  bad.experiment = "";
  EXPECT_THROW(write_result(bad, dir.path()), UsageError);
  // A file where the result folder should be: the write fails without creating anything.
  dir.write("blocker", "x");
  EXPECT_THROW(write_result(sample_result(), dir.path() / "blocker"), UsageError);
  EXPECT_EQ(files_in(dir.path()).size(), 1u);
}

std::string error_of(const nlohmann::json& j) {
  try {
    result_from_json(j);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ResultIo, MissingOrMistypedFieldIsNamed) {
  nlohmann::json j = to_json(sample_result());
  j["records"][1].erase("median_us");
  EXPECT_EQ(error_of(j), "result: '/records/1/median_us' is missing (a number or null)");

  j = to_json(sample_result());
  j["records"][0]["check"].erase("tolerance");
  EXPECT_EQ(error_of(j), "result: '/records/0/check/tolerance' is missing (a number or null)");

  j = to_json(sample_result());
  j["records"][0]["shape"] = {4096, "x"};
  EXPECT_EQ(error_of(j), "result: '/records/0/shape/1' must be a dimension: a whole number from 0 to 2^53 - 1, got \"x\"");

  j = to_json(sample_result());
  j.erase("manifest");
  EXPECT_EQ(error_of(j), "result: '/manifest' is missing (an object (algorithm, files, measured))");

  j = to_json(sample_result());
  j["schema"] = "kbench/result/v0";
  EXPECT_EQ(error_of(j), "result: '/schema' must be \"kbench/result/v1\", the schema this kbench reads, got \"kbench/result/v0\"");

  j = to_json(sample_result());
  j["records"][0].erase("timer_note");  // optional: defaults
  j["records"][0].erase("sample_visits");
  EXPECT_EQ(error_of(j), "(no error)");
}

TEST(ResultIo, ReadErrorsNameTheFile) {
  test::TempDir dir;
  const fs::path broken = dir.write("broken.json", "{\"schema\": ");
  try {
    read_result(broken);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(broken.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_result(dir.path() / "missing.json"), UsageError);
}

// archive/ keeps superseded results gzip-compressed: read back, the same result; a damaged
// .json.gz is one error naming the file.
TEST(ResultIo, CompressedResultsReadAsTheirJson) {
  test::TempDir dir;
  const Result r = sample_result();
  const fs::path file = write_result(r, dir.path());
  const std::string written = to_json(read_result(file)).dump();
  EXPECT_FALSE(is_compressed_result(file));
  ASSERT_EQ(test::run_command("gzip -9 -n " + test::shell_quoted(file)).exit_code, 0);
  const fs::path gz = file.string() + ".gz";
  ASSERT_TRUE(is_compressed_result(gz));
  EXPECT_EQ(to_json(read_result(gz)).dump(), written);
  const fs::path damaged = dir.write("damaged.json.gz", "not gzip at all");
  try {
    read_result(damaged);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("damaged.json.gz: not a valid gzip file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_result(dir.path() / "missing.json.gz"), UsageError);
}

// The digest is over a text another tool can write byte for byte (docs/schema.md, "Integrity").
TEST(ResultIntegrity, CanonicalTextIsOneTabSeparatedLinePerRecord) {
  Record r;
  r.op = "add";
  r.variant = "vec16";
  r.baseline = true;
  r.dtype = "float32";
  r.shape = {3, 1048576};
  r.cache = "cold";
  r.timer = "graph";
  r.samples_us = {0.1, 12.0, 1e-5};
  r.sample_visits = {0, 0, 1};
  r.median_us = 0.1;
  r.q1_us = std::nan("");
  r.q3_us = 6.05;
  r.min_us = 1e-5;
  r.bytes = 25165824;
  r.flops = 0;
  r.gbps = 4321.5;
  r.check.passed = true;
  Record empty;  // no shape, samples or visits: empty fields
  EXPECT_EQ(records_canonical_text({r, empty}),
            "add\tvec16\t1\tfloat32\t3x1048576\tcold\tgraph\t"
            "0.10000000000000001,12,1.0000000000000001e-05\t0,0,1\t0.10000000000000001\tnull\t"
            "6.0499999999999998\t1.0000000000000001e-05\t25165824\t0\t4321.5\t1\n"
            "\t\t0\t\t\t\t\t\t\t0\t0\t0\t0\t0\t0\t0\t0\n");
  EXPECT_EQ(records_digest({r, empty}), sha256_hex(records_canonical_text({r, empty})));
}

TEST(ResultIntegrity, WrittenFilesCarryTheDigestOfTheirRecords) {
  test::TempDir dir;
  const Result written = sample_result();
  const fs::path file = write_result(written, dir.path());
  const nlohmann::json j = nlohmann::json::parse(test::read_file(file));
  EXPECT_EQ(j.at("integrity").at("algorithm"), "sha256");
  EXPECT_EQ(j.at("integrity").at("records"), records_digest(written.records));
  EXPECT_EQ(read_result(file).recorded_digest, records_digest(written.records));
}

TEST(ResultIntegrity, OneChangedSampleChangesTheDigest) {
  Result r = sample_result();
  const std::string before = records_digest(r.records);
  r.records[1].samples_us[2] = std::nextafter(r.records[1].samples_us[2], 1e9);
  EXPECT_NE(records_digest(r.records), before);
  r = sample_result();
  r.records[0].check.passed = false;
  EXPECT_NE(records_digest(r.records), before);
}

TEST(ResultIntegrity, OlderFilesWithoutItStillRead) {
  nlohmann::json j = to_json(sample_result());
  j.erase("integrity");
  EXPECT_EQ(result_from_json(j).recorded_digest, "");
  j["integrity"] = {{"algorithm", "md5"}, {"records", "00"}};
  EXPECT_EQ(error_of(j), "result: '/integrity/algorithm' must be \"sha256\", got \"md5\"");
  j["integrity"] = {{"algorithm", "sha256"}};
  EXPECT_EQ(error_of(j), "result: '/integrity/records' is missing (a string (the records' SHA-256, docs/schema.md))");
}

}  // namespace
}  // namespace kbench
