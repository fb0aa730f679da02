// Preparing a case and checking a variant against the FP64 oracle, before any timing.
//
// prepare_case() draws fresh random inputs (rounded to the dtype, so the oracle sees what the
// kernel sees), uploads them (row padding filled with NaN, so a kernel that reads it is
// caught), and computes the oracle. check_variant() poisons every output with NaN and a guard
// region after it with a byte pattern, launches once, and compares every element; then it
// launches again on the same workspace and requires the same bits.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "core/device_buffer.hpp"
#include "core/rng.hpp"
#include "harness/problem.hpp"
#include "record/result.hpp"

namespace kbench {

// Lets a test replace generated inputs (masked rows, constant rows, large magnitudes).
using InputTweak = std::function<void(const Case&, std::vector<HostTensor>& inputs)>;

struct DeviceSet {  // one set of input and output buffers for a case
  std::vector<DeviceBuffer> inputs, outputs;
  std::vector<DeviceTensor> input_views, output_views;
};

struct PreparedCase {
  const Problem* problem = nullptr;
  Case c;
  std::vector<TensorDesc> input_desc, output_desc;
  DeviceSet primary;                    // checked against the oracle
  std::vector<HostTensor> expected;     // oracle outputs; released after checking
  // The rows of each per-row output (one with as many rows as the case's first input) that
  // check_variant compares, ascending; empty: every row. Outputs of other shapes (a weight
  // gradient summed over rows) are compared whole either way.
  std::vector<std::int64_t> check_rows;
  // Whether `expected` holds only the check_rows rows of the per-row outputs, packed in their
  // order (the op's oracle_rows computed them alone); otherwise every row.
  bool expected_sampled = false;
  // Extra sets (copies of the primary inputs at other addresses) for cold graph timing.
  std::vector<DeviceSet> rotation;
  std::size_t set_bytes() const;        // bytes of one set's inputs and outputs
};

// `check_rows` (ascending; empty: none asked) are the rows to check; when none are asked and the
// problem samples rows (Problem::check_sample_rows), they are drawn here from `rng` after the
// inputs. Where the problem has oracle_rows, the oracle computes only those rows.
PreparedCase prepare_case(const Problem& problem, const Case& c, Rng& rng, const InputTweak& tweak = {},
                          std::vector<std::int64_t> check_rows = {});

// Launches `v` on the primary set and compares every element with the oracle (of check_rows
// only, where it names rows), then launches it again (same workspace, outputs poisoned again)
// and requires bit-identical outputs (of the same rows).
// Never throws for a wrong answer (passed = false with a detail line); throws CudaError if the
// launch itself fails.
CheckInfo check_variant(const PreparedCase& pc, const Launchable& v, cudaStream_t stream);

// `count` distinct rows of `rows`, ascending, drawn from `seed`: always the first and the last
// row (a grid-stride or tail bug shows there first), the rest uniformly. Every row when
// count >= rows.
std::vector<std::int64_t> sample_rows(std::int64_t rows, std::int64_t count, std::uint64_t seed);

// Adds copies of the primary inputs until the sets total at least `min_total_bytes`.
void add_rotation_sets(PreparedCase& pc, std::size_t min_total_bytes, cudaStream_t stream);

}  // namespace kbench
