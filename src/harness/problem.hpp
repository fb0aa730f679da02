// The vocabulary of a measurement, as the harness sees it: a Case (an op at a dtype and shape),
// the tensors it reads and writes, a Problem (what is computed: inputs, FP64 oracle, tolerance,
// bytes, flops) and a Launchable (one way to compute it: a name, a workspace, a launcher).
//
// The harness prepares, checks and times Problems and Launchables without knowing which ops
// exist; the registry (src/registry/) names them as ops and variants, and the kernels fill them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/rng.hpp"
#include "core/shape.hpp"

namespace kbench {

// What kind of inputs a case is filled with. `random` is each op's own generator, the inputs its
// tolerance is written for; the others are adversarial kinds for the tolerance probe (kbench
// check --tolerance-probe), each op choosing those that mean something for it (Problem::
// input_kinds) and saying in its *_op.cpp how it draws them:
//   large       magnitudes near the dtype's safe range for the op (the oracle's answer finite)
//   cancelling  sums that nearly cancel: pairs x, -x with small noise (outputs near 0, where
//               only the absolute tolerance is left)
//   constant    rows of one repeated value (rounding errors of one sign, not random ones)
//   spike       one large element per row among ordinary ones
enum class InputKind { random, large, cancelling, constant, spike };

inline constexpr InputKind kAllInputKinds[] = {InputKind::random, InputKind::large, InputKind::cancelling,
                                               InputKind::constant, InputKind::spike};

std::string_view input_kind_name(InputKind k);  // "random", "large", ...

// One measured case: an op at a dtype and shape. Shapes are [n] for elementwise ops,
// [rows, cols] for row ops, [M, N, K] for GEMM. row_stride (elements; 0 = contiguous) lets
// tests place the rows of a row op's inputs further apart than their width.
struct Case {
  std::string op;
  DType dtype = DType::f32;
  Shape shape;
  std::int64_t row_stride = 0;
  // The op's parameters beyond dtype and shape (rmsnorm's eps, a backward's flags), by name:
  // each op declares those it takes with their defaults (Op::params), and a case holds them all.
  std::map<std::string, double> params = {};
  // The kind of inputs generate() draws (random but for the tolerance probe); a tolerance may
  // read it where its size depends on the inputs' magnitude.
  InputKind input_kind = InputKind::random;
  // The parameter `name`; throws std::logic_error when the case does not hold it (a bug: the
  // sweep and the tests fill every declared parameter).
  double param(const std::string& name) const;
};

// "softmax float16 4096x4096", with its parameters if it has any: "... eps=1e-05", and its
// input kind unless random: "... inputs=large"
std::string case_label(const Case& c);

// A tensor an op reads or writes: a 2-D row-major view (a 1-D tensor is one row).
struct TensorDesc {
  std::string name;
  DType dtype = DType::f32;
  std::int64_t rows = 1;
  std::int64_t cols = 0;
  std::int64_t row_stride = 0;  // elements between row starts; >= cols
  std::int64_t elements() const { return rows * cols; }
  std::int64_t span_elements() const { return rows == 0 ? 0 : (rows - 1) * row_stride + cols; }
};

// A tensor on the device, as a launcher receives it.
struct DeviceTensor {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 1;
  std::int64_t cols = 0;
  std::int64_t row_stride = 0;
  template <class T>
  T* as() const { return static_cast<T*>(data); }
};

// Logical (dense rows x cols) values on the host, in double.
struct HostTensor {
  TensorDesc desc;
  std::vector<double> values;
};

struct LaunchArgs {
  const Case& c;
  std::span<const DeviceTensor> inputs;
  std::span<const DeviceTensor> outputs;
  void* workspace = nullptr;  // Launchable::workspace_bytes(c) bytes, or nullptr
  cudaStream_t stream = nullptr;
  // The launch's first kernel may start while the kernel before it on the stream still runs
  // (programmatic dependent launch) and wait inside for its writes: a training step sets it for
  // its backward, whose inputs its forward has just written. A permission, not a promise: a
  // launcher that does not honour it launches as usual.
  bool overlap_previous = false;
};

// |out - ref| <= atol + rtol * |ref| per element; `why` says where the size comes from.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  std::string why;
};

// How many full-size streams an op reads and writes (softmax_backward reads y and dy and writes
// dx: 2:1; row_sum reads x and writes a column: 1:0), for its same-traffic roofline: a stream
// kernel of that mix moving the same bytes (kernels/stream/, experiments/sweep.cpp). 0:0 where no
// stream kernel stands for it (compute-bound, or a composition of several kernels) and for the
// rooflines themselves (copy, the 1:1 roofline of copy_fraction, and stream).
struct TrafficMix {
  int reads = 0, writes = 0;
  bool any() const { return reads > 0; }
  std::string label() const { return std::to_string(reads) + ":" + std::to_string(writes); }  // "2:1"
};

struct Problem {
  std::string name;  // the op
  // Path prefixes (relative to the repository root) of the sources that could change this
  // op's numbers: its kernel folder and any baseline code it calls. Results record them as
  // measured, and verify holds the result to them.
  std::vector<std::string> sources;
  std::function<std::vector<TensorDesc>(const Case&)> inputs;
  std::function<std::vector<TensorDesc>(const Case&)> outputs;
  // Fills the inputs' values (already sized) with inputs of the case's input_kind; must not
  // produce only zeros.
  std::function<void(const Case&, std::vector<HostTensor>& inputs, Rng&)> generate;
  // The input kinds generate() knows (random always); other kinds are never asked of it.
  std::vector<InputKind> input_kinds = {InputKind::random};
  // FP64 reference, computed from the inputs as the device will see them (rounded to dtype).
  std::function<std::vector<HostTensor>(const Case&, const std::vector<HostTensor>& inputs)> oracle;
  // True when shape[0] is the row count and the oracle computes row r of every output with
  // that many rows from row r of the inputs with that many rows (and the other inputs whole).
  // A case that checks only sampled rows (harness/prepare.hpp) then runs the oracle on a case
  // of those rows alone; where an output has another shape (rmsnorm_backward's dw, a sum over
  // every row) the oracle still computes every row.
  bool oracle_by_row = false;
  // For an op whose oracle costs much per row (GEMM: 2NK multiply-adds per row of C), the number
  // of rows of a case to check, drawn at random (harness/prepare.hpp sample_rows), in every
  // experiment; 0, or as many as the case has, checks every row. Set together with oracle_rows.
  std::function<std::int64_t(const Case&)> check_sample_rows;
  // The oracle of only `rows` (ascending) of the per-row outputs (those with as many rows as the
  // first input), packed densely in that order; other outputs whole. For ops whose inputs cannot
  // be cut to the sampled rows by their shape alone (GEMM's B has K rows, which may equal M);
  // it takes precedence over oracle_by_row. The rows it does not compute are never compared.
  std::function<std::vector<HostTensor>(const Case&, const std::vector<HostTensor>& inputs,
                                        const std::vector<std::int64_t>& rows)>
      oracle_rows;
  std::function<Tolerance(const Case&, std::size_t output_index)> tolerance;
  std::function<double(const Case&)> bytes;  // the bytes the op must move
  std::function<double(const Case&)> flops;  // the flops it must do (0 if memory-bound only)
  std::function<TrafficMix(const Case&)> traffic = [](const Case&) { return TrafficMix{}; };
};

struct Launchable {
  std::string name;
  bool baseline = false;
  // Scratch the launch needs. It is zeroed once when allocated and then reused by every launch,
  // so a launch that relies on zeros (row_sum split's per-row counters) must leave them zero
  // when it finishes.
  std::function<std::size_t(const Case&)> workspace_bytes = [](const Case&) { return std::size_t{0}; };
  std::function<void(const LaunchArgs&)> launch;
  // A variant that computes in a lower precision than its op's contract, and says so in its name
  // (gemm's tf32 variants), sets the tolerance it is held to here; empty: the op's tolerance.
  std::function<Tolerance(const Case&, std::size_t output_index)> tolerance = {};
  // What the variant ran on the case, for the record (Record::plan): a tile configuration, an
  // autotuner's choice, as the text of a JSON object (this header is compiled by nvcc too, which
  // is spared nlohmann's). Asked after the check launches; empty or "": nothing recorded.
  std::function<std::string(const Case&)> plan = {};
};

}  // namespace kbench
