// Plugins (src/plugin/, docs/plugins.md) without a GPU: the adapter that makes a plugin's table
// entry an ordinary Variant (driven with host pointers its launcher never dereferences), the
// loader on the real test libraries (tests/plugins/), and `kbench run --dry-run --plugin` and
// `kbench check --plugin`: each refusal one line, the rest going on, exit 2 only when nothing
// asked for can be loaded. What needs a GPU (checks and timing) is tests/gpu/test_plugins.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>

#include "core/errors.hpp"
#include "cpu/run_command.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "plugin/plugin_library.hpp"
#include "plugin/plugin_loader.hpp"
#include "plugin/plugin_variant.hpp"
#include "record/sha256.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// A registry with every op of this build and kbench's own variants, private to the test (the
// loader adds to the one it is given).
Registry fresh_registry() {
  Registry r;
  for (const Op& op : registry().ops()) r.add_op(op);
  for (const Op& op : registry().ops())
    for (const Variant* v : registry().variants(op.name)) r.add_variant(*v);
  return r;
}

// What the last call of recording_launch saw, copied out of the ABI's structs.
struct Seen {
  std::string op, input_name, output_name, param_name;
  int dtype = 0, rank = 0, inputs = 0, outputs = 0, params = 0;
  std::int64_t shape0 = 0, shape1 = 0, in_rows = 0, in_cols = 0, in_stride = 0;
  double param_value = 0;
  const void* in_data = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  void* stream = nullptr;
};
Seen seen;
int launch_result = 0;

int recording_launch(const kbench_plugin_args* a, cudaStream_t stream) {
  seen = Seen{};
  seen.op = a->problem->op;
  seen.dtype = a->problem->dtype;
  seen.rank = a->problem->rank;
  seen.shape0 = a->problem->shape[0];
  seen.shape1 = a->problem->shape[1];
  seen.params = a->problem->param_count;
  if (seen.params > 0) {
    seen.param_name = a->problem->params[0].name;
    seen.param_value = a->problem->params[0].value;
  }
  seen.inputs = a->input_count;
  seen.outputs = a->output_count;
  seen.input_name = a->inputs[0].name;
  seen.output_name = a->outputs[0].name;
  seen.in_data = a->inputs[0].data;
  seen.in_rows = a->inputs[0].rows;
  seen.in_cols = a->inputs[0].cols;
  seen.in_stride = a->inputs[0].row_stride;
  seen.workspace = a->workspace;
  seen.workspace_bytes = a->workspace_bytes;
  seen.stream = stream;
  if (launch_result != 0) std::snprintf(a->error, a->error_size, "cannot do %lld rows", (long long)a->inputs[0].rows);
  return launch_result;
}

int narrow_rows_only(const kbench_plugin_case* c, char* why, std::size_t size) {
  if (c->shape[1] <= 64) return 1;
  std::snprintf(why, size, "at most 64 columns");
  return 0;
}

std::size_t workspace_of(const kbench_plugin_case* c) { return static_cast<std::size_t>(c->shape[0]) * 4; }

const std::int32_t kFloat32[] = {KBENCH_PLUGIN_FLOAT32};
const std::int32_t kUnknownDtype[] = {KBENCH_PLUGIN_FLOAT16, 42};

kbench_plugin_variant row_sum_variant(const char* name) {
  return {"row_sum", name, "a test variant", kFloat32, 1, narrow_rows_only, workspace_of, recording_launch};
}

TEST(PluginVariant, EachProblemHasItsLine) {
  const Registry r = fresh_registry();
  kbench_plugin_variant v = row_sum_variant("fine");
  EXPECT_EQ(plugin_variant_problem(v, r), "");
  v.op = "no_such_op";
  EXPECT_TRUE(has(plugin_variant_problem(v, r), "unknown op 'no_such_op' (known: ")) << plugin_variant_problem(v, r);
  v = row_sum_variant("fine");
  v.dtypes = kUnknownDtype;
  v.dtype_count = 2;
  EXPECT_TRUE(has(plugin_variant_problem(v, r), "unknown dtype code 42")) << plugin_variant_problem(v, r);
  v = row_sum_variant("two words");
  EXPECT_TRUE(has(plugin_variant_problem(v, r), "is not a name")) << plugin_variant_problem(v, r);
  v = row_sum_variant(nullptr);
  EXPECT_TRUE(has(plugin_variant_problem(v, r), "has no name"));
  v = row_sum_variant("fine");
  v.launch = nullptr;
  EXPECT_TRUE(has(plugin_variant_problem(v, r), "no launcher"));
  v = row_sum_variant("fine");
  v.dtype_count = 0;
  EXPECT_TRUE(has(plugin_variant_problem(v, r), "no dtypes"));
  EXPECT_TRUE(has(plugin_name_problem(std::string(49, 'a').c_str()), "longer than 48"));
  EXPECT_EQ(plugin_name_problem(std::string(48, 'a').c_str()), "");
}

TEST(PluginVariant, ANameTakenIsRefused) {
  Registry r = fresh_registry();
  const kbench_plugin_variant v = row_sum_variant("twice");
  r.add_variant(make_plugin_variant(v, r.op("row_sum"), "libtest.so"));
  EXPECT_EQ(r.variant("row_sum", "plugin.twice").op, "row_sum");
  EXPECT_TRUE(has(plugin_variant_problem(v, r), "already has a variant 'plugin.twice'")) << plugin_variant_problem(v, r);
}

TEST(PluginVariant, UnsupportedFromDtypesAndSupports) {
  const Registry r = fresh_registry();
  const Variant v = make_plugin_variant(row_sum_variant("narrow"), r.op("row_sum"), "libtest.so");
  EXPECT_EQ(v.name, "plugin.narrow");
  EXPECT_FALSE(v.baseline);
  EXPECT_TRUE(has(v.summary, "libtest.so"));
  EXPECT_EQ(v.unsupported(make_case(r.op("row_sum"), DType::f32, {8, 64})), "");
  EXPECT_EQ(v.unsupported(make_case(r.op("row_sum"), DType::f32, {8, 65})), "the plugin says: at most 64 columns");
  EXPECT_EQ(v.unsupported(make_case(r.op("row_sum"), DType::f16, {8, 64})), "the plugin does not list float16");
  EXPECT_EQ(v.workspace_bytes(make_case(r.op("row_sum"), DType::f32, {8, 64})), 32u);
}

// The launcher gets the case, the tensors with the op's names, strides and parameters, the
// workspace and the stream; pointers are passed, never dereferenced, so host ones serve here.
TEST(PluginVariant, LaunchPassesTheCaseAndTurnsAnErrorIntoVariantLaunchError) {
  const Registry r = fresh_registry();
  const Op& rms = r.op("rmsnorm");
  kbench_plugin_variant pv{"rmsnorm", "seen", nullptr, kFloat32, 1, nullptr, workspace_of, recording_launch};
  const Variant v = make_plugin_variant(pv, rms, "libtest.so");
  Case c = make_case(rms, DType::f32, {3, 100}, {{"eps", 1e-3}});
  c.row_stride = 128;
  float x[4] = {}, out[4] = {};
  int workspace = 0;
  std::vector<DeviceTensor> ins, outs;
  for (const TensorDesc& d : rms.inputs(c)) ins.push_back(DeviceTensor{x, d.dtype, d.rows, d.cols, d.row_stride});
  for (const TensorDesc& d : rms.outputs(c)) outs.push_back(DeviceTensor{out, d.dtype, d.rows, d.cols, d.row_stride});
  auto* stream = reinterpret_cast<cudaStream_t>(&workspace);
  launch_result = 0;
  v.launch(LaunchArgs{c, ins, outs, &workspace, stream});
  EXPECT_EQ(seen.op, "rmsnorm");
  EXPECT_EQ(seen.dtype, KBENCH_PLUGIN_FLOAT32);
  EXPECT_EQ(seen.rank, 2);
  EXPECT_EQ(seen.shape0, 3);
  EXPECT_EQ(seen.shape1, 100);
  EXPECT_EQ(seen.params, 1);
  EXPECT_EQ(seen.param_name, "eps");
  EXPECT_EQ(seen.param_value, 1e-3);
  EXPECT_EQ(seen.inputs, static_cast<int>(ins.size()));
  EXPECT_EQ(seen.outputs, static_cast<int>(outs.size()));
  EXPECT_EQ(seen.input_name, rms.inputs(c).front().name);
  EXPECT_EQ(seen.output_name, rms.outputs(c).front().name);
  EXPECT_EQ(seen.in_data, static_cast<const void*>(x));
  EXPECT_EQ(seen.in_rows, 3);
  EXPECT_EQ(seen.in_cols, 100);
  EXPECT_EQ(seen.in_stride, 128);
  EXPECT_EQ(seen.workspace, static_cast<void*>(&workspace));
  EXPECT_EQ(seen.workspace_bytes, 12u);
  EXPECT_EQ(seen.stream, static_cast<void*>(stream));

  launch_result = 5;
  try {
    v.launch(LaunchArgs{c, ins, outs, &workspace, stream});
    ADD_FAILURE() << "an error code must throw";
  } catch (const VariantLaunchError& e) {
    EXPECT_TRUE(has(e.what(), "plugin.seen (libtest.so) returned error 5 on rmsnorm float32 3x100")) << e.what();
    EXPECT_TRUE(has(e.what(), ": cannot do 3 rows")) << e.what();
  }
  launch_result = 0;
}

// --- the loader, on the libraries tests/plugins/ builds -------------------------------------

std::string usage_error_of(const std::vector<std::string>& paths) {
  Registry r = fresh_registry();
  try {
    load_plugins(paths, r);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(PluginLoader, RefusesWholeRequestsThatLoadNothing) {
  const std::string version = usage_error_of({KBENCH_PLUGIN_WRONG_VERSION});
  EXPECT_TRUE(has(version, "plugin refused: ")) << version;
  EXPECT_TRUE(has(version, "built for plugin ABI version " + std::to_string(KBENCH_PLUGIN_ABI_VERSION + 1) +
                               ", this kbench loads " + std::to_string(KBENCH_PLUGIN_ABI_VERSION) + " only"))
      << version;
  EXPECT_TRUE(has(usage_error_of({KBENCH_PLUGIN_NO_ENTRY}), "exports no 'kbench_plugin_entry'"));
  EXPECT_TRUE(has(usage_error_of({KBENCH_PLUGIN_BAD_VARIANTS}), "no plugin variant could be loaded (5 refusals"));
  EXPECT_TRUE(has(usage_error_of({"/no/such/plugin.so"}), "--plugin '/no/such/plugin.so': no such file"));
  EXPECT_TRUE(has(usage_error_of({KBENCH_TEST_DATA}), ": not a file"));
  EXPECT_TRUE(has(usage_error_of({KBENCH_EXAMPLE_PLUGIN, KBENCH_EXAMPLE_PLUGIN}), "is given twice"));
  // A file that is not a shared library: dlopen's own reason.
  const fs::path dir = test::fresh_temp_dir();
  { std::ofstream(dir / "text.so") << "not a library\n"; }
  EXPECT_TRUE(has(usage_error_of({(dir / "text.so").string()}), "dlopen failed: ")) << usage_error_of({(dir / "text.so").string()});
  fs::remove_all(dir);
}

TEST(PluginLoader, LoadsTheExampleAndRecordsPathAndHash) {
  Registry r = fresh_registry();
  const std::size_t before = r.variants("row_sum").size();
  const PluginLoad load = load_plugins({KBENCH_EXAMPLE_PLUGIN, KBENCH_PLUGIN_BAD_VARIANTS, KBENCH_PLUGIN_WRONG_VERSION}, r);
  EXPECT_EQ(load.registered, 1);
  EXPECT_EQ(load.refusals.size(), 6u);  // five variants and one library
  EXPECT_EQ(plugin_refusals(load.libraries), 6);
  EXPECT_EQ(r.variants("row_sum").size(), before + 1);
  const Variant& v = r.variant("row_sum", "plugin.warp_per_row");
  EXPECT_EQ(v.unsupported(make_case(r.op("row_sum"), DType::bf16, {4, 4096})), "");
  EXPECT_TRUE(has(v.unsupported(make_case(r.op("row_sum"), DType::bf16, {4, 4097})), "at most 4096 columns"));
  ASSERT_EQ(load.libraries.size(), 3u);
  const nlohmann::json& example = load.libraries[0];
  EXPECT_EQ(example["path"], fs::absolute(KBENCH_EXAMPLE_PLUGIN).lexically_normal().string());
  EXPECT_EQ(example["sha256"], sha256_hex(test::read_file(KBENCH_EXAMPLE_PLUGIN)));
  EXPECT_EQ(example["name"], "row_sum_example");
  EXPECT_EQ(example["abi_version"], KBENCH_PLUGIN_ABI_VERSION);
  EXPECT_EQ(example["variants"], nlohmann::json::array({"row_sum/plugin.warp_per_row"}));
  EXPECT_TRUE(example["refused"].empty());
  EXPECT_EQ(load.libraries[1]["refused"].size(), 5u);
  EXPECT_TRUE(load.libraries[1]["variants"].empty());
  EXPECT_EQ(load.libraries[2]["refused"].size(), 1u);
  EXPECT_FALSE(load.libraries[2].contains("name"));  // a table of another version is not read
  for (const std::string& line : load.refusals) EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}

// --- the command line -------------------------------------------------------------------------

test::CommandResult dry_run(const std::string& plugins, const std::string& shape = "64x1024") {
  return test::run_kbench("run --dry-run --op row_sum --dtype float32 --shape " + shape + " " + plugins);
}

std::string plugin(const char* path) { return "--plugin " + test::shell_quoted(path); }

TEST(PluginCli, TheExampleIsPlannedBesideKbenchsOwn) {
  const test::CommandResult d = dry_run(plugin(KBENCH_EXAMPLE_PLUGIN));
  EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_TRUE(has(d.out, "plugin.warp_per_row")) << d.out;
  for (const Variant* v : registry().variants("row_sum")) EXPECT_TRUE(has(d.out, v->name)) << v->name << "\n" << d.out;
  const test::CommandResult only = dry_run(plugin(KBENCH_EXAMPLE_PLUGIN) + " --variant plugin.warp_per_row");
  EXPECT_EQ(only.exit_code, 0) << only.err;
  EXPECT_TRUE(has(only.out, "plugin.warp_per_row")) << only.out;
  const test::CommandResult wide = dry_run(plugin(KBENCH_EXAMPLE_PLUGIN), "64x8192");
  EXPECT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_TRUE(has(wide.out, "plugin.warp_per_row: the plugin says: rows of at most 4096 columns")) << wide.out;
}

// The default config (copy and add) has no row_sum case: the example's variant would not run,
// and the plan says so rather than pass it over in silence.
TEST(PluginCli, AVariantNoCaseRunsIsNamed) {
  const test::CommandResult d = test::run_kbench("run --dry-run " + plugin(KBENCH_EXAMPLE_PLUGIN));
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(has(d.out + d.err, "plugin.warp_per_row runs in no case of this plan (op 'row_sum' is not among"))
      << d.out << d.err;
  const test::CommandResult planned = dry_run(plugin(KBENCH_EXAMPLE_PLUGIN));
  EXPECT_FALSE(has(planned.out + planned.err, "runs in no case")) << planned.out;
}

TEST(PluginCli, ABadRequestIsOneLineAndExitTwo) {
  for (const char* path : {KBENCH_PLUGIN_WRONG_VERSION, KBENCH_PLUGIN_NO_ENTRY, "/no/such/plugin.so"}) {
    for (const char* cmd : {"run --dry-run", "check"}) {
      const test::CommandResult d =
          test::run_kbench(std::string(cmd) + " --op row_sum --dtype float32 --shape 8x32 " + plugin(path));
      EXPECT_EQ(d.exit_code, 2) << cmd << " " << path << "\n" << d.out << d.err;
      EXPECT_EQ(test::line_count(d.err), 1) << d.err;
      EXPECT_TRUE(d.out.empty()) << d.out;
    }
  }
  const test::CommandResult twice = dry_run(plugin(KBENCH_EXAMPLE_PLUGIN) + " " + plugin(KBENCH_EXAMPLE_PLUGIN));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_TRUE(has(twice.err, "is given twice")) << twice.err;
}

TEST(PluginCli, RefusalsAreOneLineEachAndThePlanGoesOn) {
  const test::CommandResult d =
      dry_run(plugin(KBENCH_PLUGIN_WRONG_VERSION) + " " + plugin(KBENCH_PLUGIN_BAD_VARIANTS) + " " +
              plugin(KBENCH_PLUGIN_NO_ENTRY) + " " + plugin(KBENCH_EXAMPLE_PLUGIN));
  EXPECT_EQ(d.exit_code, 1) << d.out << d.err;
  EXPECT_TRUE(has(d.out, "plugin.warp_per_row")) << d.out;  // the run goes on with what loaded
  const std::string all = d.out + d.err;
  for (const char* why : {"built for plugin ABI version", "exports no 'kbench_plugin_entry'", "unknown op 'matmul_4d'",
                          "unknown dtype code 9", "'not a name' is not a name", "it has no launcher", "it lists no dtypes"})
    EXPECT_TRUE(has(all, why)) << why << "\n" << all;
  // The plan alone on stdout; on stderr one error line per refusal, the plugin that loaded, and
  // last the line that ends the run (exit 1).
  EXPECT_FALSE(has(d.out, "refused")) << d.out;
  int refusal_lines = 0;
  std::string last;
  std::istringstream lines(d.err);
  for (std::string line; std::getline(lines, line); last = line) refusal_lines += has(line, "] error plugin ");
  EXPECT_EQ(refusal_lines, 7) << d.err;
  EXPECT_EQ(last.rfind("kbench: 7 plugin refusal(s)", 0), 0u) << d.err;
}

// The same library under two paths: the second's variant names one the first already took.
TEST(PluginCli, ASecondVariantOfTheSameNameIsRefused) {
  const fs::path dir = test::fresh_temp_dir();
  fs::copy_file(KBENCH_EXAMPLE_PLUGIN, dir / "copy.so");
  const test::CommandResult d = dry_run(plugin(KBENCH_EXAMPLE_PLUGIN) + " --plugin " + test::shell_quoted(dir / "copy.so"));
  EXPECT_EQ(d.exit_code, 1) << d.out << d.err;
  EXPECT_TRUE(has(d.out + d.err, "already has a variant 'plugin.warp_per_row'")) << d.out << d.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kbench
