#include "harness/prepare.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <sstream>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "harness/compare.hpp"

namespace kbench {

namespace {

// Bytes after every output that no kernel may touch: a write past the end is caught.
constexpr std::size_t kGuardBytes = 256;
constexpr unsigned char kGuardByte = 0xA5;
// 0xFF bytes are a NaN in float32, float16 and bfloat16 alike.
constexpr unsigned char kPoisonByte = 0xFF;

std::size_t span_bytes(const TensorDesc& d) {
  return static_cast<std::size_t>(d.span_elements()) * dtype_size(d.dtype);
}

DeviceTensor view(const TensorDesc& d, void* data) {
  return DeviceTensor{data, d.dtype, d.rows, d.cols, d.row_stride};
}

// Uploads an input's values, already packed in its dtype (dense rows), into its strided
// device layout; the gaps between rows hold NaN.
DeviceBuffer upload(const TensorDesc& d, const std::vector<std::byte>& packed) {
  const std::size_t row_bytes = static_cast<std::size_t>(d.cols) * dtype_size(d.dtype);
  DeviceBuffer buf(span_bytes(d));
  if (d.row_stride == d.cols) {
    if (!packed.empty()) KB_CUDA(cudaMemcpy(buf.get(), packed.data(), packed.size(), cudaMemcpyHostToDevice));
    return buf;
  }
  std::vector<std::byte> staged(buf.size(), std::byte{kPoisonByte});
  for (std::int64_t r = 0; r < d.rows; ++r)
    std::memcpy(&staged[r * d.row_stride * dtype_size(d.dtype)], &packed[r * row_bytes], row_bytes);
  if (!staged.empty()) KB_CUDA(cudaMemcpy(buf.get(), staged.data(), staged.size(), cudaMemcpyHostToDevice));
  return buf;
}

// The given rows of a dense [rows, cols] tensor, packed in their order: a tensor of
// rows.size() rows.
HostTensor pick_rows(const HostTensor& t, const std::vector<std::int64_t>& rows) {
  HostTensor out{t.desc, {}};
  out.desc.rows = static_cast<std::int64_t>(rows.size());
  out.desc.row_stride = t.desc.cols;
  out.values.resize(rows.size() * static_cast<std::size_t>(t.desc.cols));
  for (std::size_t k = 0; k < rows.size(); ++k)
    std::copy_n(t.values.begin() + rows[k] * t.desc.cols, t.desc.cols, out.values.begin() + k * t.desc.cols);
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

DeviceSet allocate_outputs(const std::vector<TensorDesc>& out_desc, DeviceSet set) {
  for (const auto& d : out_desc) {
    set.outputs.emplace_back(span_bytes(d) + kGuardBytes);
    set.output_views.push_back(view(d, set.outputs.back().get()));
  }
  return set;
}

// An output as the kernel left it: its span and the guard bytes after it, copied to the host.
std::vector<std::byte> output_bits(const TensorDesc& d, const DeviceBuffer& buf) {
  std::vector<std::byte> bits(span_bytes(d) + kGuardBytes);
  KB_CUDA(cudaMemcpy(bits.data(), buf.get(), bits.size(), cudaMemcpyDeviceToHost));
  return bits;
}

bool guard_intact(const TensorDesc& d, const std::vector<std::byte>& bits) {
  for (std::size_t i = span_bytes(d); i < bits.size(); ++i)
    if (bits[i] != std::byte{kGuardByte}) return false;
  return true;
}

// Dense logical values of a (possibly strided) tensor from its output bits.
std::vector<double> dense_values(const TensorDesc& d, const std::vector<std::byte>& bits) {
  const std::size_t es = dtype_size(d.dtype), row_bytes = d.cols * es;
  std::vector<std::byte> dense(d.elements() * es);
  for (std::int64_t r = 0; r < d.rows; ++r)
    if (row_bytes) std::memcpy(&dense[r * row_bytes], &bits[r * d.row_stride * es], row_bytes);
  return decode(d.dtype, dense);
}

}  // namespace

std::size_t PreparedCase::set_bytes() const {
  std::size_t total = 0;
  for (const auto& d : input_desc) total += span_bytes(d);
  for (const auto& d : output_desc) total += span_bytes(d);
  return total;
}

bool samples_output(const std::vector<std::int64_t>& check_rows, std::int64_t input_rows, const TensorDesc& d) {
  return !check_rows.empty() && d.rows == input_rows && static_cast<std::int64_t>(check_rows.size()) < d.rows;
}

bool sampled_output(const PreparedCase& pc, const TensorDesc& d) {
  return !pc.input_desc.empty() && samples_output(pc.check_rows, pc.input_desc.front().rows, d);
}

// Where the op computes row by row and every output is per-row, the oracle runs on a case of
// the checked rows alone (their inputs picked out): a grid cell of 2^28 elements checks 64
// rows, and the other rows' FP64 values, each output as large as the input in double, were
// computed only to be dropped.
std::vector<HostTensor> checked_oracle(const Problem& problem, const Case& c, const std::vector<HostTensor>& inputs,
                                       const std::vector<std::int64_t>& check_rows) {
  const std::vector<TensorDesc> outputs = problem.outputs(c);
  const std::int64_t input_rows = inputs.empty() ? 0 : inputs.front().desc.rows;
  const auto rows = static_cast<std::int64_t>(check_rows.size());
  bool by_row = problem.oracle_by_row && !outputs.empty();
  for (const auto& d : outputs) by_row = by_row && samples_output(check_rows, input_rows, d);
  const bool any_sampled = std::any_of(outputs.begin(), outputs.end(), [&](const TensorDesc& d) {
    return samples_output(check_rows, input_rows, d);
  });
  std::vector<HostTensor> out;
  if (problem.oracle_rows && any_sampled) {
    out = problem.oracle_rows(c, inputs, check_rows);
  } else if (by_row) {
    Case sub = c;
    sub.shape.at(0) = rows;
    sub.row_stride = 0;  // the picked rows are dense
    std::vector<HostTensor> picked;
    for (const auto& t : inputs) picked.push_back(t.desc.rows == input_rows ? pick_rows(t, check_rows) : t);
    out = problem.oracle(sub, picked);
  } else {
    out = problem.oracle(c, inputs);
  }
  if (out.size() != outputs.size())
    throw std::logic_error("the oracle of " + problem.name + " gave the wrong number of outputs");
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto& d = outputs[i];
    const bool sampled = samples_output(check_rows, input_rows, d);
    if (sampled && !by_row && static_cast<std::int64_t>(out[i].values.size()) == d.elements())
      out[i] = pick_rows(out[i], check_rows);
    const std::int64_t want = sampled ? rows * d.cols : d.elements();
    if (static_cast<std::int64_t>(out[i].values.size()) != want)
      throw std::logic_error("the oracle's output '" + d.name + "' of " + problem.name + " has the wrong size");
  }
  return out;
}

PreparedCase prepare_case(const Problem& problem, const Case& c, Rng& rng, const InputTweak& tweak,
                          std::vector<std::int64_t> check_rows) {
  PreparedCase pc;
  pc.problem = &problem;
  pc.c = c;
  pc.input_desc = problem.inputs(c);
  pc.output_desc = problem.outputs(c);

  auto t = std::chrono::steady_clock::now();
  std::vector<HostTensor> inputs;
  for (const auto& d : pc.input_desc)
    inputs.push_back(HostTensor{d, std::vector<double>(static_cast<std::size_t>(d.elements()))});
  problem.generate(c, inputs, rng);
  if (tweak) tweak(c, inputs);
  // An op that samples its own rows (GEMM) draws them after its inputs, when none were asked.
  const std::int64_t rows = pc.input_desc.empty() ? 0 : pc.input_desc.front().rows;
  if (check_rows.empty() && problem.check_sample_rows) {
    const std::int64_t want = problem.check_sample_rows(c);
    if (want > 0 && want < rows) check_rows = sample_rows(rows, want, rng.next_u64());
  }
  pc.check_rows = std::move(check_rows);
  pc.seconds.generate = seconds_since(t);

  // Round to the dtype first, so the oracle computes from exactly what the kernel reads; the
  // rounding's packed bits are what is uploaded.
  t = std::chrono::steady_clock::now();
  for (auto& in : inputs) {
    pc.primary.inputs.push_back(upload(in.desc, encode(in.desc.dtype, in.values)));
    pc.primary.input_views.push_back(view(in.desc, pc.primary.inputs.back().get()));
  }
  pc.primary = allocate_outputs(pc.output_desc, std::move(pc.primary));
  std::size_t staging = 0;
  for (const auto& d : pc.output_desc)
    if (sampled_output(pc, d))
      staging = std::max(staging, pc.check_rows.size() * static_cast<std::size_t>(d.cols) * dtype_size(d.dtype));
  if (staging) pc.sample_staging = DeviceBuffer(staging + kGuardBytes);
  pc.seconds.upload = seconds_since(t);

  t = std::chrono::steady_clock::now();
  pc.expected = checked_oracle(problem, c, inputs, pc.check_rows);
  pc.seconds.oracle = seconds_since(t);
  return pc;
}

void add_rotation_sets(PreparedCase& pc, std::size_t min_total_bytes, cudaStream_t stream) {
  const std::size_t per_set = std::max<std::size_t>(pc.set_bytes(), 1);
  while ((pc.rotation.size() + 1) * per_set < min_total_bytes) {
    DeviceSet set;
    for (std::size_t i = 0; i < pc.input_desc.size(); ++i) {
      set.inputs.emplace_back(pc.primary.inputs[i].size());
      KB_CUDA(cudaMemcpyAsync(set.inputs.back().get(), pc.primary.inputs[i].get(),
                              pc.primary.inputs[i].size(), cudaMemcpyDeviceToDevice, stream));
      set.input_views.push_back(view(pc.input_desc[i], set.inputs.back().get()));
    }
    pc.rotation.push_back(allocate_outputs(pc.output_desc, std::move(set)));
  }
  KB_CUDA(cudaStreamSynchronize(stream));
}

std::vector<std::int64_t> sample_rows(std::int64_t rows, std::int64_t count, std::uint64_t seed) {
  std::vector<std::int64_t> out;
  if (count >= rows) {
    for (std::int64_t r = 0; r < rows; ++r) out.push_back(r);
    return out;
  }
  std::set<std::int64_t> picked{0, rows - 1};
  Rng rng(seed);
  while (static_cast<std::int64_t>(picked.size()) < count)
    picked.insert(static_cast<std::int64_t>(rng.next_u64() % static_cast<std::uint64_t>(rows)));
  return {picked.begin(), picked.end()};
}

namespace {

// What check_variant compares of one output: its bits (every row of the span, or the sampled
// rows packed densely, as PreparedCase::expected holds the oracle's values) and whether the
// guard after its span was intact.
struct OutputTaken {
  std::vector<std::byte> bits;
  bool guard_ok = true;
  bool sampled = false;
};

OutputTaken take_output(const PreparedCase& pc, const TensorDesc& d, const DeviceBuffer& buf, cudaStream_t stream) {
  OutputTaken t;
  if (!sampled_output(pc, d)) {
    t.bits = output_bits(d, buf);
    t.guard_ok = guard_intact(d, t.bits);
    return t;
  }
  // The sampled rows and the guard are gathered on the device into the staging buffer (one
  // strided copy per run of consecutive rows, queued without waiting) and then copied to the
  // host at once: a copy per row into pageable memory waits for each (64 rows x outputs x 2
  // launches per plan, each ~10-20 us before its bytes).
  t.sampled = true;
  const std::size_t es = dtype_size(d.dtype), row_bytes = static_cast<std::size_t>(d.cols) * es;
  const std::size_t pitch = static_cast<std::size_t>(d.row_stride) * es;
  const std::size_t sample_bytes = pc.check_rows.size() * row_bytes;
  if (pc.sample_staging.size() < sample_bytes + kGuardBytes)
    throw std::logic_error("check_variant: no staging for the sampled rows (check_rows set after prepare_case?)");
  std::byte* const staging = pc.sample_staging.bytes_ptr();
  for (std::size_t k = 0; k < pc.check_rows.size();) {
    std::size_t run = 1;
    while (k + run < pc.check_rows.size() && pc.check_rows[k + run] == pc.check_rows[k] + static_cast<std::int64_t>(run))
      ++run;
    if (row_bytes)
        KB_CUDA(cudaMemcpy2DAsync(staging + k * row_bytes, row_bytes, buf.bytes_ptr() + pc.check_rows[k] * pitch, pitch,
                                row_bytes, run, cudaMemcpyDeviceToDevice, stream));
    k += run;
  }
  KB_CUDA(cudaMemcpyAsync(staging + sample_bytes, buf.bytes_ptr() + span_bytes(d), kGuardBytes,
                          cudaMemcpyDeviceToDevice, stream));
  t.bits.resize(sample_bytes + kGuardBytes);
  KB_CUDA(cudaMemcpyAsync(t.bits.data(), staging, t.bits.size(), cudaMemcpyDeviceToHost, stream));
  KB_CUDA(cudaStreamSynchronize(stream));
  t.guard_ok = std::all_of(t.bits.begin() + static_cast<std::ptrdiff_t>(sample_bytes), t.bits.end(),
                           [](std::byte b) { return b == std::byte{kGuardByte}; });
  t.bits.resize(sample_bytes);
  return t;
}

// check_variant's work, which a launcher that refuses the case interrupts (VariantLaunchError).
CheckInfo check_launches(const PreparedCase& pc, const Launchable& v, cudaStream_t stream) {
  CheckInfo info;
  if (pc.expected.size() != pc.output_desc.size())
    throw std::logic_error("check_variant: the oracle outputs were released or do not match");
  const DeviceBuffer workspace = DeviceBuffer::zeroed(v.workspace_bytes(pc.c));
  const auto poison_and_launch = [&] {
    for (std::size_t i = 0; i < pc.output_desc.size(); ++i) {
      const auto& buf = pc.primary.outputs[i];
      const std::size_t span = span_bytes(pc.output_desc[i]);
      KB_CUDA(cudaMemsetAsync(buf.get(), kPoisonByte, span, stream));
      KB_CUDA(cudaMemsetAsync(buf.bytes_ptr() + span, kGuardByte, kGuardBytes, stream));
    }
    v.launch(LaunchArgs{pc.c, pc.primary.input_views, pc.primary.output_views, workspace.get(), stream});
    KB_CUDA(cudaStreamSynchronize(stream));
  };
  const auto all_outputs = [&] {
    std::vector<OutputTaken> taken;
    for (std::size_t i = 0; i < pc.output_desc.size(); ++i)
      taken.push_back(take_output(pc, pc.output_desc[i], pc.primary.outputs[i], stream));
    return taken;
  };
  poison_and_launch();
  const std::vector<OutputTaken> first = all_outputs();

  info.passed = true;
  double worst_ratio = -1;
  for (std::size_t i = 0; i < pc.output_desc.size() && info.passed; ++i) {
    const auto& d = pc.output_desc[i];
    const OutputTaken& out = first[i];
    if (!out.guard_ok) {
      info.passed = false;
      info.share = INFINITY;
      info.detail = "output '" + d.name + "': a write past its end";
      break;
    }
    // The oracle's values as the bits are laid out: every row, or the sampled rows packed.
    const std::vector<double>& ref = pc.expected[i].values;
    if (static_cast<std::int64_t>(ref.size()) !=
        (out.sampled ? static_cast<std::int64_t>(pc.check_rows.size()) * d.cols : d.elements()))
      throw std::logic_error("check_variant: the oracle's output '" + d.name + "' has the wrong size");
    const auto row_of = [&](std::int64_t k) { return out.sampled ? pc.check_rows[k / d.cols] : k / d.cols; };
    const Tolerance tol = v.tolerance ? v.tolerance(pc.c, i) : pc.problem->tolerance(pc.c, i);
    // A contiguous output (every op's today) is compared in place; a strided one made dense.
    std::vector<double> dense;
    if (!out.sampled && d.row_stride != d.cols) dense = dense_values(d, out.bits);
    const auto got = [&](std::int64_t k) {
      return dense.empty() ? decode_one(d.dtype, out.bits.data(), k) : dense[static_cast<std::size_t>(k)];
    };
    const Scan scan = dense.empty() ? compare_output(d.dtype, out.bits.data(), ref, tol)
                                    : compare_output(dense, ref, tol);
    info.share = std::max(info.share, scan.share);
    if (scan.worst_at >= 0 && scan.worst_ratio > worst_ratio) {
      worst_ratio = scan.worst_ratio;
      const Element worst = compare_element(got(scan.worst_at), ref[static_cast<std::size_t>(scan.worst_at)], tol);
      info.max_err = worst.err;
      info.tolerance = worst.allowed;
    }
    if (scan.bad >= 0) {
      const auto k = static_cast<std::size_t>(scan.bad);
      const double g = got(scan.bad);
      const Element e = compare_element(g, ref[k], tol);
      std::ostringstream msg;
      msg.precision(9);
      msg << "output '" << d.name << "' row " << row_of(scan.bad) << " col " << k % d.cols << ": got "
          << g << ", expected " << ref[k] << " (allowed error " << e.allowed << ")";
      info.passed = false;
      info.max_err = std::isnan(e.err) || std::isnan(g) ? INFINITY : e.err;
      info.tolerance = e.allowed;
      info.detail = msg.str();
    }
  }
  // Timed launches reuse one workspace, so a second launch on it (outputs poisoned again) must
  // give the same bits: a variant that leaves its workspace dirty (row_sum split's counters)
  // or reads what the last launch left would otherwise pass here and time wrong answers.
  if (info.passed) {
    poison_and_launch();
    const std::vector<OutputTaken> second = all_outputs();
    for (std::size_t i = 0; i < second.size(); ++i)
      if (second[i].bits != first[i].bits || !second[i].guard_ok) {
        info.passed = false;
        info.share = INFINITY;
        info.detail = "a second launch on the same workspace gave different output bits";
        break;
      }
  }
  return info;
}

// A check that failed before any output could be compared: no error or share to report.
CheckInfo failed_check(std::string detail) {
  CheckInfo info;
  info.passed = false;
  info.max_err = INFINITY;
  info.share = INFINITY;
  info.detail = std::move(detail);
  return info;
}

}  // namespace

CheckInfo check_variant(const PreparedCase& pc, const Launchable& v, cudaStream_t stream) {
  try {
    return check_launches(pc, v, stream);
  } catch (const VariantLaunchError& e) {
    // A launcher that says it cannot run the case is a failed check of that case, as a wrong
    // answer is: the variant is not timed there, and the other variants and cases go on.
    return failed_check(std::string("the launch failed: ") + e.what());
  } catch (const CudaError& e) {
    // A CUDA call that failed and left the context usable (a launch configuration or a
    // function attribute the device refuses) fails this variant's check as a wrong answer does,
    // and the other variants go on. A sticky fault (an illegal address) fails every later call
    // too: it ends the process, and `--isolate` reruns the rest without the variant.
    (void)cudaGetLastError();  // clears a non-sticky error; a sticky one stays
    if (cudaStreamSynchronize(stream) != cudaSuccess || cudaGetLastError() != cudaSuccess) throw;
    return failed_check(std::string("a CUDA call failed: ") + e.what());
  }
}

}  // namespace kbench
