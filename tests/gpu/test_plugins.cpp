// Plugins on the GPU (docs/plugins.md): the worked example (docs/examples/plugin/) checked
// against the oracle, strided rows included, and timed by `kbench run` in the same visits as
// kbench's own row_sum variants and the cub baseline; then the test plugins of tests/plugins/
// that must fail, a liar (claims widths it cannot do), one that returns errors and one that
// computes wrong sums, each failed with a line while the run goes on and times the rest.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "cpu/run_command.hpp"
#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "plugin/plugin_loader.hpp"
#include "record/result.hpp"
#include "record/sha256.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::string plugin(const char* path) { return "--plugin " + test::shell_quoted(path); }

struct SweepRun {
  test::CommandResult command;
  Result result;
  bool wrote = false;
};

// `kbench run` with `args` into a fresh folder, and the one result it wrote.
SweepRun run_into_fresh_folder(const std::string& args) {
  const fs::path out = test::fresh_temp_dir();
  SweepRun r;
  r.command = test::run_kbench("run --out " + test::shell_quoted(out) + " " + args);
  for (const auto& entry : fs::recursive_directory_iterator(out))
    if (entry.path().extension() == ".json") {
      r.result = read_result(entry.path());
      r.wrote = true;
    }
  fs::remove_all(out);
  return r;
}

std::set<std::string> timed_shapes(const Result& r, const std::string& variant) {
  std::set<std::string> shapes;
  for (const Record& rec : r.records)
    if (rec.variant == variant && rec.check.passed && rec.median_us > 0) shapes.insert(shape_string(rec.shape));
  return shapes;
}

// The shapes of `shapes` at which kbench's own row_sum variant `v` runs, in
// one dtype of `dtypes` at least, as timed_shapes joins them (some plans skip wide rows: warp
// holds at most 1024 float32 elements a row).
std::set<std::string> supported_shapes(const Variant& v, const std::vector<DType>& dtypes,
                                       const std::vector<Shape>& shapes) {
  std::set<std::string> out;
  for (const Shape& shape : shapes)
    if (std::any_of(dtypes.begin(), dtypes.end(), [&](DType t) {
          return v.unsupported(make_case(registry().op("row_sum"), t, shape)).empty();
        }))
      out.insert(shape_string(shape));
  return out;
}

// Check failures of `variant`, as "<shape>: <detail>".
std::vector<std::string> failures(const Result& r, const std::string& variant) {
  std::vector<std::string> out;
  for (const auto& f : r.extra.at("check_failures"))
    if (f.at("variant") == variant)
      out.push_back(shape_string(f.at("shape").get<Shape>()) + ": " + f.at("detail").get<std::string>());
  return out;
}

TEST(PluginGpu, TheExamplePassesTheOracleOnAwkwardAndStridedRows) {
  KB_REQUIRE_GPU();
  Registry r;
  for (const Op& op : registry().ops()) r.add_op(op);
  load_plugins({KBENCH_EXAMPLE_PLUGIN}, r);
  const Op& op = r.op("row_sum");
  const Variant& v = r.variant("row_sum", "plugin.warp_per_row");
  Rng rng(7);
  for (DType t : kAllDTypes)
    for (const Shape& shape : {Shape{1, 1}, Shape{3, 1000}, Shape{199, 760}, Shape{131, 4096}, Shape{5000, 33}})
      for (std::int64_t pad : {0, 7}) {
        Case c = make_case(op, t, shape);
        if (pad) c.row_stride = shape[1] + pad;  // rows further apart than their width: NaN between
        const PreparedCase pc = prepare_case(op, c, rng);
        const CheckInfo info = check_variant(pc, v, nullptr);
        EXPECT_TRUE(info.passed) << case_label(c) << " stride " << c.row_stride << ": " << info.detail;
      }
}

TEST(PluginGpu, TheExampleIsTimedBesideKbenchsOwnAndTheBaseline) {
  KB_REQUIRE_GPU();
  const SweepRun run = run_into_fresh_folder(plugin(KBENCH_EXAMPLE_PLUGIN) +
                                        " --op row_sum --dtype float32 --dtype float16 --shape 199x760"
                                        " --shape 1024x4096 --timer both --visits 2 --samples 2 --no-roofline");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.out << run.command.err;
  ASSERT_TRUE(run.wrote);
  const Result& r = run.result;
  EXPECT_TRUE(r.extra.at("check_failures").empty()) << r.extra.at("check_failures").dump();
  const std::set<std::string> both = {"199x760", "1024x4096"};
  EXPECT_EQ(timed_shapes(r, "plugin.warp_per_row"), both);
  for (const Variant* v : registry().variants("row_sum"))
    EXPECT_EQ(timed_shapes(r, v->name), supported_shapes(*v, {DType::f32, DType::f16}, {{199, 760}, {1024, 4096}}))
        << v->name;
  EXPECT_EQ(timed_shapes(r, "cub"), both);
  int plugin_records = 0;
  for (const Record& rec : r.records)
    if (rec.variant == "plugin.warp_per_row") {
      ++plugin_records;
      EXPECT_FALSE(rec.baseline);
      EXPECT_GT(rec.gbps, 0);
    }
  EXPECT_EQ(plugin_records, 2 * 2 * 2);  // dtypes x shapes x timers
  const auto& comparisons = r.extra.at("comparisons");
  EXPECT_TRUE(std::any_of(comparisons.begin(), comparisons.end(), [](const nlohmann::json& c) {
    return c.at("variant") == "plugin.warp_per_row" && c.at("baseline") == "cub";
  })) << comparisons.dump();
  const auto& plugins = r.meta.at("plugins");
  ASSERT_EQ(plugins.size(), 1u);
  EXPECT_EQ(plugins[0].at("sha256"), sha256_hex(test::read_file(KBENCH_EXAMPLE_PLUGIN)));
  EXPECT_EQ(plugins[0].at("variants"), nlohmann::json::array({"row_sum/plugin.warp_per_row"}));
  const auto& measured = r.manifest.at("measured").at("row_sum");
  EXPECT_TRUE(std::any_of(measured.begin(), measured.end(),
                          [](const nlohmann::json& p) { return p.get<std::string>().starts_with("src/plugin/"); }));
}

// Three shapes: 64x1024 the liar computes, 64x1000 it gets wrong (no tail), 64x2048 its launcher
// refuses. The erroring and the wrong plugins fail everywhere; the example and kbench's own
// variants are timed everywhere.
const char* const kBadShapes = " --op row_sum --dtype float32 --shape 64x1024 --shape 64x1000 --shape 64x2048";

TEST(PluginGpu, LyingErroringAndWrongPluginsFailTheirChecksAndTheRunGoesOn) {
  KB_REQUIRE_GPU();
  const SweepRun run = run_into_fresh_folder(plugin(KBENCH_PLUGIN_LIAR) + " " + plugin(KBENCH_PLUGIN_ERRORING) + " " +
                                        plugin(KBENCH_PLUGIN_WRONG) + " " + plugin(KBENCH_EXAMPLE_PLUGIN) + kBadShapes +
                                        " --visits 2 --samples 2 --no-roofline");
  EXPECT_EQ(run.command.exit_code, 1) << run.command.out << run.command.err;  // failed checks, written anyway
  EXPECT_TRUE(has(run.command.err, "failed their check")) << run.command.err;
  ASSERT_TRUE(run.wrote) << run.command.out << run.command.err;
  const Result& r = run.result;
  const std::set<std::string> all = {"64x1024", "64x1000", "64x2048"};
  EXPECT_EQ(timed_shapes(r, "plugin.warp_per_row"), all);
  for (const Variant* v : registry().variants("row_sum"))
    EXPECT_EQ(timed_shapes(r, v->name), supported_shapes(*v, {DType::f32}, {{64, 1024}, {64, 1000}, {64, 2048}}))
        << v->name;
  EXPECT_EQ(timed_shapes(r, "cub"), all);

  EXPECT_EQ(timed_shapes(r, "plugin.liar"), std::set<std::string>{"64x1024"});
  const std::vector<std::string> liar = failures(r, "plugin.liar");
  ASSERT_EQ(liar.size(), 2u) << r.extra.at("check_failures").dump();
  EXPECT_TRUE(std::any_of(liar.begin(), liar.end(), [](const std::string& f) {
    return f.starts_with("64x1000: output 'sum'");
  })) << liar[0] << "\n" << liar[1];
  EXPECT_TRUE(std::any_of(liar.begin(), liar.end(), [](const std::string& f) {
    return f.starts_with("64x2048: the launch failed: plugin.liar") && has(f, "returned error 22") &&
           has(f, "rows wider than 1024 are beyond this kernel");
  })) << liar[0] << "\n" << liar[1];

  EXPECT_TRUE(timed_shapes(r, "plugin.erroring").empty());
  for (const std::string& f : failures(r, "plugin.erroring"))
    EXPECT_TRUE(has(f, "returned error 7") && has(f, "this test plugin refuses every launch (64 rows)")) << f;
  EXPECT_EQ(failures(r, "plugin.erroring").size(), 3u);

  EXPECT_TRUE(timed_shapes(r, "plugin.drops_last_column").empty());
  for (const std::string& f : failures(r, "plugin.drops_last_column")) EXPECT_TRUE(has(f, "output 'sum'")) << f;
  EXPECT_EQ(failures(r, "plugin.drops_last_column").size(), 3u);
  EXPECT_EQ(r.meta.at("plugins").size(), 4u);
}

TEST(PluginGpu, CheckPrintsALinePerVariantAndCase) {
  KB_REQUIRE_GPU();
  const test::CommandResult c = test::run_kbench("check " + plugin(KBENCH_PLUGIN_LIAR) + " " +
                                                 plugin(KBENCH_PLUGIN_ERRORING) + " " + plugin(KBENCH_EXAMPLE_PLUGIN) +
                                                 kBadShapes);
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  const auto line_with = [&](const std::string& a, const std::string& b) {
    std::size_t at = 0;
    for (std::string line; at < c.out.size(); at += line.size() + 1) {
      line = c.out.substr(at, c.out.find('\n', at) - at);
      if (has(line, a) && has(line, b)) return line;
    }
    return std::string();
  };
  for (const char* shape : {"64x1024", "64x1000", "64x2048"}) {
    EXPECT_TRUE(line_with(std::string("row_sum float32 ") + shape, "plugin.warp_per_row").starts_with("ok ")) << c.out;
    EXPECT_TRUE(line_with(std::string("row_sum float32 ") + shape, "plugin.erroring").starts_with("FAIL ")) << c.out;
  }
  EXPECT_TRUE(line_with("row_sum float32 64x1024 ", "plugin.liar").starts_with("ok ")) << c.out;
  EXPECT_TRUE(line_with("row_sum float32 64x1000 ", "plugin.liar").starts_with("FAIL ")) << c.out;
  EXPECT_TRUE(line_with("row_sum float32 64x2048 ", "plugin.liar").starts_with("FAIL ")) << c.out;
}

}  // namespace
}  // namespace kbench
