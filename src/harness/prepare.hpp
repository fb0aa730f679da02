// Preparing a case and checking a variant against the FP64 oracle, before any timing.
//
// prepare_case() draws fresh random inputs (rounded to the dtype, so the oracle sees what the
// kernel sees), uploads them (row padding filled with NaN, so a kernel that reads it is
// caught), and computes the oracle (of the checked rows only, where the case checks a sample
// and the op allows it: Problem::oracle_by_row). check_variant() poisons every output with NaN
// and a guard region after it with a byte pattern, launches once, and compares every element
// (of the checked rows); then it launches again on the same workspace and requires the same
// bits.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "core/device_buffer.hpp"
#include "core/errors.hpp"
#include "core/rng.hpp"
#include "harness/problem.hpp"
#include "record/result.hpp"

namespace kbench {

// A variant's launcher reported that it could not run the case it was given (a plugin's launch
// returned an error code, src/plugin/). check_variant catches it: the variant fails that case's
// check and is not timed there, and the run goes on. Should it escape anyway (a launcher that
// passed its check and fails while being timed), it ends the command as a Failure: one line,
// exit status 1.
class VariantLaunchError : public Failure {
 public:
  using Failure::Failure;
};

// Lets a test replace generated inputs (masked rows, constant rows, large magnitudes).
using InputTweak = std::function<void(const Case&, std::vector<HostTensor>& inputs)>;

struct DeviceSet {  // one set of input and output buffers for a case
  std::vector<DeviceBuffer> inputs, outputs;
  std::vector<DeviceTensor> input_views, output_views;
};

// Where prepare_case's time went, for the runner's log line.
struct PrepareSeconds {
  double generate = 0;  // drawing the inputs (and the test's tweak)
  double upload = 0;    // rounding them to the dtype and copying them to the device
  double oracle = 0;    // the FP64 reference of the checked rows
};

struct PreparedCase {
  const Problem* problem = nullptr;
  Case c;
  std::vector<TensorDesc> input_desc, output_desc;
  DeviceSet primary;                    // checked against the oracle
  // The rows of each per-row output (one with as many rows as the case's first input) that
  // check_variant compares, ascending; empty: every row. Outputs of other shapes (a weight
  // gradient summed over rows) are compared whole either way. Given to prepare_case, which
  // keeps the oracle's values of these rows only.
  std::vector<std::int64_t> check_rows;
  // Oracle outputs; released after checking. A sampled output (sampled_output below) holds the
  // check_rows' rows only, packed in their order.
  std::vector<HostTensor> expected;
  // Device scratch into which check_variant gathers a sampled output's rows before one copy to
  // the host; empty when nothing is sampled.
  DeviceBuffer sample_staging;
  // Extra sets (copies of the primary inputs at other addresses) for cold graph timing.
  std::vector<DeviceSet> rotation;
  PrepareSeconds seconds;
  std::size_t set_bytes() const;        // bytes of one set's inputs and outputs
};

// `check_rows` (ascending; empty: none asked) are the rows to check; when none are asked and the
// problem samples rows (Problem::check_sample_rows), they are drawn here from `rng` after the
// inputs.
PreparedCase prepare_case(const Problem& problem, const Case& c, Rng& rng, const InputTweak& tweak = {},
                          std::vector<std::int64_t> check_rows = {});

// Whether check_variant compares only `check_rows` of output d of a case whose first input has
// `input_rows` rows: d is per-row (as many rows) and the sample is smaller than it.
bool samples_output(const std::vector<std::int64_t>& check_rows, std::int64_t input_rows, const TensorDesc& d);
bool sampled_output(const PreparedCase& pc, const TensorDesc& d);  // of pc's check_rows

// The oracle's outputs as check_variant compares them (PreparedCase::expected): a sampled
// output holds the check_rows' rows only, computed alone where the op allows it
// (Problem::oracle_rows, or Problem::oracle_by_row on those rows' inputs), picked from every
// row's otherwise. Host only; throws std::logic_error where the oracle's outputs are not the op's.
std::vector<HostTensor> checked_oracle(const Problem& problem, const Case& c, const std::vector<HostTensor>& inputs,
                                       const std::vector<std::int64_t>& check_rows);

// Launches `v` on the primary set and compares every element with the oracle (of check_rows
// only, where it names rows), then launches it again (same workspace, outputs poisoned again)
// and requires bit-identical outputs (of the same rows).
// Never throws for a wrong answer, nor for a launcher that refuses the case by throwing
// VariantLaunchError (a plugin's error code, above): passed = false with a detail line. Throws
// CudaError if a CUDA call fails (a kernel's fault poisons the whole context).
CheckInfo check_variant(const PreparedCase& pc, const Launchable& v, cudaStream_t stream);

// `count` distinct rows of `rows`, ascending, drawn from `seed`: always the first and the last
// row (a grid-stride or tail bug shows there first), the rest uniformly. Every row when
// count >= rows.
std::vector<std::int64_t> sample_rows(std::int64_t rows, std::int64_t count, std::uint64_t seed);

// Adds copies of the primary inputs until the sets total at least `min_total_bytes`.
void add_rotation_sets(PreparedCase& pc, std::size_t min_total_bytes, cudaStream_t stream);

}  // namespace kbench
