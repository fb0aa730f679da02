// RMSNorm forward and backward beyond the row tests' awkward and strided shapes
// (test_rows.cpp runs every variant there): eps at both ends, constant and large rows, upstream
// gradients of other shapes, dh present and absent, a frozen weight, dw's bits from run to run
// and from process to process, and the launch contracts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/device_buffer.hpp"
#include "core/subprocess.hpp"
#include "device/device_limits.hpp"
#include "gpu_test.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_plan.hpp"
#include "record/sha256.hpp"

namespace kbench {
namespace {

const char* const kOps[] = {"rmsnorm", "rmsnorm_backward"};

// Every variant of the case's op on it (tweaked inputs, and tolerances scaled by `scale` for
// inputs that many times larger than the op's generator draws); returns how many ran.
int check_all(const Case& c, const InputTweak& tweak = {}, double scale = 1) {
  Op op = registry().op(c.op);
  const auto base = op.tolerance;
  op.tolerance = [base, scale](const Case& k, std::size_t i) {
    Tolerance t = base(k, i);
    t.atol *= scale;
    return t;
  };
  Rng rng(3);
  const PreparedCase pc = prepare_case(op, c, rng, tweak);
  int ran = 0;
  for (const Variant* v : registry().variants(c.op)) {
    if (!v->unsupported(c).empty()) continue;
    const CheckInfo info = check_variant(pc, *v, nullptr);
    EXPECT_TRUE(info.passed) << case_label(c) << " variant " << v->name << ": " << info.detail;
    ++ran;
  }
  EXPECT_GE(ran, 4) << case_label(c);  // auto, looped, split and eager take every row shape
  return ran;
}

Case rms_case(const char* op, DType dt, std::int64_t rows, std::int64_t cols, const std::map<std::string, double>& p = {}) {
  return make_case(registry().op(op), dt, {rows, cols}, p);
}

struct Shape2 {
  std::int64_t rows, cols;
};
const Shape2 kShapes[] = {{3, 1000}, {131, 8193}, {64, 4096}, {4, 32769}};

TEST(RmsnormGpu, EpsAtBothEnds) {
  KB_REQUIRE_GPU();
  int cases = 0;
  for (const char* op : kOps)
    for (DType dt : kAllDTypes)
      for (const Shape2& s : kShapes)
        for (double eps : {1e-12, 1e-2}) {
          check_all(rms_case(op, dt, s.rows, s.cols, {{"eps", eps}}));
          ++cases;
        }
  EXPECT_EQ(cases, 2 * 3 * 4 * 2);
}

// Constant rows (rstd = 1 / sqrt(c^2 + eps) exactly representable as a float sum) and rows 1e4
// times larger than the generator's: y, dx's norm term and dw do not change with the scale of
// h, and its rstd term shrinks with it, so the tolerances hold unscaled.
TEST(RmsnormGpu, ConstantAndLargeRows) {
  KB_REQUIRE_GPU();
  const auto constant = [](const Case&, std::vector<HostTensor>& in) {
    for (auto& v : in[0].values) v = 0.375;
  };
  const auto large = [](const Case&, std::vector<HostTensor>& in) {
    for (auto& v : in[0].values) v *= 1e4;
  };
  for (const char* op : kOps)
    for (DType dt : kAllDTypes)
      for (const Shape2& s : kShapes) {
        check_all(rms_case(op, dt, s.rows, s.cols), constant);
        check_all(rms_case(op, dt, s.rows, s.cols), large);
      }
}

// dy the same row for every row, dy constant, and dy with a mean of 100: the tolerances of dx
// and dw, written for |dy| <= 1.25, scale by 100 for the last.
TEST(RmsnormGpu, UpstreamGradients) {
  KB_REQUIRE_GPU();
  const auto broadcast = [](const Case&, std::vector<HostTensor>& in) {
    auto& dy = in[2];
    for (std::int64_t r = 1; r < dy.desc.rows; ++r)
      for (std::int64_t c = 0; c < dy.desc.cols; ++c) dy.values[r * dy.desc.cols + c] = dy.values[c];
  };
  const auto constant = [](const Case&, std::vector<HostTensor>& in) {
    for (auto& v : in[2].values) v = -0.75;
  };
  const auto large_mean = [](const Case&, std::vector<HostTensor>& in) {
    for (auto& v : in[2].values) v += 100;
  };
  for (DType dt : kAllDTypes)
    for (const Shape2& s : kShapes) {
      const Case c = rms_case("rmsnorm_backward", dt, s.rows, s.cols);
      check_all(c, broadcast);
      check_all(c, constant);
      check_all(c, large_mean, 100);
    }
}

TEST(RmsnormGpu, ResidualGradientAndFrozenWeight) {
  KB_REQUIRE_GPU();
  for (double dh : {0.0, 1.0})
    for (double frozen : {0.0, 1.0})
      for (DType dt : kAllDTypes)
        for (const Shape2& s : {Shape2{199, 760}, Shape2{16, 4096}, Shape2{4, 32769}}) {
          const Case c = rms_case("rmsnorm_backward", dt, s.rows, s.cols, {{"dh", dh}, {"frozen", frozen}});
          const Op& op = registry().op(c.op);
          EXPECT_EQ(op.inputs(c).size(), dh != 0 ? 4u : 3u);
          EXPECT_EQ(op.outputs(c).size(), frozen != 0 ? 1u : 2u);
          check_all(c);
        }
}

// The resident plan at sizes where its grid writes many partial rows of dw (at float16 4096x4096,
// 62 clusters' rows over 4096 columns; at 16384x1024 more): there the grid sum takes tiles of 16
// or 8 columns rather than 32 (grid_sum_cols), and the grid barrier, crossed by hundreds of
// blocks, runs twice on one workspace (each check launches twice). The shapes of the tests
// above leave fewer partial rows than one batch of loads, so the sum's tiles stay 32 wide there.
// check_all runs every variant that takes a case; the grid-sum variant must be among them, or
// this test would pass without the sum it is for.
TEST(RmsnormGpu, GridSumOverManyPartialRows) {
  KB_REQUIRE_GPU();
  const Variant& grid_sum = registry().variant("rmsnorm_backward", "dw_registers_grid_sum");
  int cases = 0;
  for (double dh : {0.0, 1.0})
    for (DType dt : kAllDTypes)
      for (const Shape2& s : {Shape2{4096, 4096}, Shape2{16384, 1024}}) {
        const Case c = rms_case("rmsnorm_backward", dt, s.rows, s.cols, {{"dh", dh}});
        EXPECT_EQ(grid_sum.unsupported(c), "") << case_label(c);
        check_all(c);
        ++cases;
      }
  EXPECT_EQ(cases, 2 * 3 * 2);
}

// float32 rows of 1025-2048 vectors (4097-8192 columns) are resident at 8 vectors a thread, in
// kernels of their own (dh loaded after the row's reductions, dw kept in shared memory whatever
// the way): with and without dh and dw, a row per block, the last vectors of a row on some
// threads only (6000 columns: 1500 vectors over 256 threads x 8), and more rows than blocks. No
// other test reaches these kernels: the shapes above are 4-vector or looped in float32.
TEST(RmsnormGpu, EightVectorFloat32Rows) {
  KB_REQUIRE_GPU();
  int cases = 0;
  for (const Shape2& s : {Shape2{5, 8192}, Shape2{600, 6000}, Shape2{3, 4100}})
    for (double dh : {0.0, 1.0})
      for (double frozen : {0.0, 1.0}) {
        const rows::RowPlan plan =
            rows::row_plan(s.rows, s.cols, DType::f32, current_device_limits(), rows::row_rules("rmsnorm_backward"));
        EXPECT_EQ(plan.kind, rows::RowKind::resident) << rows::describe(plan);
        EXPECT_EQ(plan.vecs, 8) << rows::describe(plan);
        check_all(rms_case("rmsnorm_backward", DType::f32, s.rows, s.cols, {{"dh", dh}, {"frozen", frozen}}));
        ++cases;
      }
  EXPECT_EQ(cases, 3 * 2 * 2);
}

// The split plan at the edges of the cluster kernel's builds (rmsnorm_backward.cu): 4, 8 and
// 16 columns a thread with clusters of 8 (to 16384, 32768, 65536 columns), clusters of 16 (to
// 131072) and one past it (the two-pass kernels); one row (dw written by the one cluster) and
// five (partials and the finalize), with and without dh and dw.
TEST(RmsnormGpu, SplitPlanAtTheClusterKernelsEdges) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("rmsnorm_backward");
  int checked = 0;
  for (std::int64_t cols : {16384, 16385, 32768, 32769, 65536, 65537, 131072, 131073})
    for (std::int64_t rows : {1, 5})
      for (double dh : {0.0, 1.0})
        for (double frozen : {0.0, 1.0})
          for (DType dt : {DType::f32, DType::bf16}) {
            const Case c = rms_case("rmsnorm_backward", dt, rows, cols, {{"dh", dh}, {"frozen", frozen}});
            Rng rng(5);
            const PreparedCase pc = prepare_case(op, c, rng);
            for (const char* name : {"split", "split_two_pass"}) {
              const CheckInfo info = check_variant(pc, registry().variant(c.op, name), nullptr);
              EXPECT_TRUE(info.passed) << case_label(c) << " variant " << name << ": " << info.detail;
              ++checked;
            }
          }
  EXPECT_EQ(checked, 8 * 2 * 2 * 2 * 2 * 2);
}

// The kernels (graph nodes) one launch of a variant is, captured on a stream of its own.
std::size_t kernels_in_launch(const Variant& v, const PreparedCase& pc) {
  cudaStream_t stream = nullptr;
  KB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const DeviceBuffer workspace = DeviceBuffer::zeroed(v.workspace_bytes(pc.c));
  cudaGraph_t graph = nullptr;
  KB_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  v.launch(LaunchArgs{pc.c, pc.primary.input_views, pc.primary.output_views, workspace.get(), stream});
  KB_CUDA(cudaStreamEndCapture(stream, &graph));
  std::size_t nodes = 0;
  KB_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  KB_CUDA(cudaGraphDestroy(graph));
  KB_CUDA(cudaStreamDestroy(stream));
  return nodes;
}

// The edges test above passes whichever kernels run; this one says which: where clusters
// exist, the split plan of a few rows of up to 131072 columns is the one cluster kernel (dw of
// one row written by it, of several added by the finalize), and past that width, or where
// clusters do not exist, the two-pass kernels, as split_two_pass is everywhere.
TEST(RmsnormGpu, SplitPlanIsTheClusterKernelWhereItFits) {
  KB_REQUIRE_GPU();
  const Op& op = registry().op("rmsnorm_backward");
  const bool clusters = device_attribute(cudaDevAttrClusterLaunch) != 0;
  struct Expected {
    std::int64_t rows, cols;
    std::size_t split, two_pass;  // kernels a launch, where clusters exist
  };
  int checked = 0;
  for (const Expected& e : {Expected{1, 32769, 1, 3}, Expected{4, 32769, 2, 3}, Expected{2, 131072, 2, 3},
                            Expected{2, 131073, 3, 3}}) {
    const Case c = rms_case("rmsnorm_backward", DType::bf16, e.rows, e.cols, {{"dh", 1}});
    Rng rng(7);
    const PreparedCase pc = prepare_case(op, c, rng);
    EXPECT_EQ(kernels_in_launch(registry().variant(c.op, "split"), pc), clusters ? e.split : e.two_pass)
        << case_label(c);
    EXPECT_EQ(kernels_in_launch(registry().variant(c.op, "split_two_pass"), pc), e.two_pass) << case_label(c);
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// dw of the automatic plan at a case where every block adds many rows, as a digest of its bits.
std::string dw_digest(const std::string& variant) {
  const Op& op = registry().op("rmsnorm_backward");
  const Case c = make_case(op, DType::bf16, {8192, 1024});
  Rng rng(11);
  const PreparedCase pc = prepare_case(op, c, rng);
  const Variant& v = registry().variant(c.op, variant);
  const DeviceBuffer workspace = DeviceBuffer::zeroed(v.workspace_bytes(c));
  std::string bits(static_cast<std::size_t>(c.shape[1]) * dtype_size(c.dtype), '\0');
  std::string digests;
  for (int launch = 0; launch < 2; ++launch) {
    v.launch(LaunchArgs{c, pc.primary.input_views, pc.primary.output_views, workspace.get(), nullptr});
    KB_CUDA(cudaMemcpy(bits.data(), pc.primary.outputs[1].get(), bits.size(), cudaMemcpyDeviceToHost));
    if (launch) digests += ' ';  // appended, not " " + string: GCC 12 warns falsely (-Wrestrict) on that
    digests += sha256_hex(bits);
  }
  return digests;
}

TEST(RmsnormGpu, WeightGradientBitsRepeatWithinAProcess) {
  KB_REQUIRE_GPU();
  for (const char* variant : {"auto", "looped", "split", "split_two_pass"}) {
    const std::string d = dw_digest(variant);
    EXPECT_EQ(d.substr(0, 64), d.substr(65)) << variant << ": two launches gave different dw bits";
  }
}

// Run by the test below in a second process of this binary; writes the digest to a file.
TEST(RmsnormGpu, DISABLED_WeightGradientDigestChild) {
  const char* out = std::getenv("KBENCH_DW_DIGEST_FILE");
  ASSERT_NE(out, nullptr);
  std::ofstream(out) << dw_digest("auto").substr(0, 64);
}

TEST(RmsnormGpu, WeightGradientBitsRepeatAcrossProcesses) {
  KB_REQUIRE_GPU();
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("kbench-dw-" + std::to_string(::getpid()));
  ProcessOptions options;
  options.env["KBENCH_DW_DIGEST_FILE"] = file.string();
  const ProcessResult child = run_process({std::filesystem::read_symlink("/proc/self/exe").string(),
                                           "--gtest_also_run_disabled_tests",
                                           "--gtest_filter=RmsnormGpu.DISABLED_WeightGradientDigestChild"},
                                          options);
  ASSERT_TRUE(child.ok()) << child.out;
  std::string theirs;
  std::ifstream(file) >> theirs;
  std::filesystem::remove(file);
  EXPECT_EQ(theirs.size(), 64u);
  EXPECT_EQ(theirs, dw_digest("auto").substr(0, 64)) << "another process summed dw to other bits";
}

TEST(RmsnormGpu, LaunchersRejectBrokenContracts) {
  KB_REQUIRE_GPU();
  const Case c = rms_case("rmsnorm", DType::f32, 4, 100);
  DeviceBuffer x(4 * 100 * 4), r(4 * 100 * 4), w(100 * 4), h(4 * 100 * 4), y(4 * 100 * 4), ws(1 << 16);
  const DeviceTensor xt{x.get(), DType::f32, 4, 100, 100}, rt{r.get(), DType::f32, 4, 100, 100};
  const DeviceTensor narrow_w{w.get(), DType::f32, 1, 99, 99};
  const DeviceTensor overlap{r.get(), DType::f32, 4, 100, 99};
  const DeviceTensor wt{w.get(), DType::f32, 1, 100, 100};
  const DeviceTensor ht{h.get(), DType::f32, 4, 100, 100}, yt{y.get(), DType::f32, 4, 100, 100};
  int refused = 0;
  for (const Variant* v : registry().variants("rmsnorm")) {
    for (const auto& ins : {std::vector<DeviceTensor>{xt, rt, narrow_w}, std::vector<DeviceTensor>{xt, overlap, wt}}) {
      const std::vector<DeviceTensor> outs{ht, yt};
      EXPECT_THROW(v->launch(LaunchArgs{c, ins, outs, ws.get(), nullptr}), std::invalid_argument) << v->name;
      ++refused;
    }
  }
  EXPECT_EQ(refused, 2 * static_cast<int>(registry().variants("rmsnorm").size()));
  const Case wide = rms_case("rmsnorm_backward", DType::f32, 1, (1 << 20) + 1);
  for (const Variant* v : registry().variants(wide.op)) EXPECT_FALSE(v->unsupported(wide).empty()) << v->name;
}

}  // namespace
}  // namespace kbench
