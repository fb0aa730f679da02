// The kernel registry. An Op says what is computed (its tensors, input generator, FP64
// oracle, tolerance, byte and flop counts); a Variant says one way to compute it (a name,
// whether it is a baseline, which cases it supports, and a launcher on a stream).
//
// Registration is explicit (src/registry/all_ops.cpp lists every register_* function) and
// never touches the GPU: device work starts in main.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/rng.hpp"

namespace kbench {

// One measured case: an op at a dtype and shape. Shapes are [n] for elementwise ops,
// [rows, cols] for row ops, [M, N, K] for GEMM. row_stride (elements; 0 = contiguous) lets
// tests place the rows of a row op's inputs further apart than their width.
struct Case {
  std::string op;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::int64_t row_stride = 0;
};

std::string shape_string(const std::vector<std::int64_t>& shape);  // "4096x4096"

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
  void* workspace = nullptr;  // Variant::workspace_bytes(c) bytes, or nullptr
  cudaStream_t stream = nullptr;
};

// |out - ref| <= atol + rtol * |ref| per element; `why` says where the size comes from.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  std::string why;
};

struct Op {
  std::string name;
  std::string summary;
  std::size_t shape_rank = 1;  // 1: [n]; 2: [rows, cols]; 3: [M, N, K]
  // Path prefixes (relative to the repository root) of the sources that could change this
  // op's numbers: its kernel folder and any baseline code it calls. Verify compares these.
  std::vector<std::string> sources;
  std::function<std::vector<TensorDesc>(const Case&)> inputs;
  std::function<std::vector<TensorDesc>(const Case&)> outputs;
  // Fills the inputs' values (already sized); must not produce only zeros.
  std::function<void(const Case&, std::vector<HostTensor>& inputs, Rng&)> generate;
  // FP64 reference, computed from the inputs as the device will see them (rounded to dtype).
  std::function<std::vector<HostTensor>(const Case&, const std::vector<HostTensor>& inputs)> oracle;
  std::function<Tolerance(const Case&, std::size_t output_index)> tolerance;
  std::function<double(const Case&)> bytes;  // the bytes the op must move
  std::function<double(const Case&)> flops;  // the flops it must do (0 if memory-bound only)
};

struct Variant {
  std::string op;
  std::string name;
  bool baseline = false;
  std::string summary;
  // Empty when the variant supports the case; otherwise why it does not.
  std::function<std::string(const Case&)> unsupported = [](const Case&) { return std::string(); };
  // Scratch the launch needs. It is zeroed once when allocated and then reused by every launch
  // of the variant, so a launch that relies on zeros (row_sum split's per-row counters) must
  // leave them zero when it finishes.
  std::function<std::size_t(const Case&)> workspace_bytes = [](const Case&) { return std::size_t{0}; };
  std::function<void(const LaunchArgs&)> launch;
};

class Registry {
 public:
  void add_op(Op op);
  void add_variant(Variant v);
  const std::vector<Op>& ops() const { return ops_; }
  // Both throw UsageError naming the known choices.
  const Op& op(std::string_view name) const;
  const Variant& variant(std::string_view op, std::string_view name) const;
  std::vector<const Variant*> variants(std::string_view op) const;

 private:
  std::vector<Op> ops_;
  std::vector<Variant> variants_;
};

// The registry with every op and variant of this build.
const Registry& registry();

// Each op family registers itself through one of these (see all_ops.cpp).
void register_copy(Registry& r);
void register_add(Registry& r);
void register_row_sum(Registry& r);
void register_softmax(Registry& r);  // softmax and softmax_backward

}  // namespace kbench
