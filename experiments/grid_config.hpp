// The grid's inputs: which row op, which dtypes, which row counts (absolute, and as multiples
// of the device's SM count) and widths, how cells are checked and timed. Read from a JSON
// config (configs/grid.json) and narrowed by command-line flags; a cell is a (dtype, rows,
// width) of the op.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace kbench {

// rows_per_sm above this is a typo, not a grid: 65536 x the SM count of any GPU stays far
// below kMaxDim rows.
inline constexpr double kMaxRowsPerSm = 65536;

struct GridSettings {
  std::string description;
  std::string config_path;
  std::vector<std::string> ops;  // the config's; a run times one (`op`)
  std::string op;
  std::vector<DType> dtypes{DType::bf16};
  std::vector<std::int64_t> rows;       // absolute row counts
  std::vector<double> rows_per_sm;      // row counts as multiples of the SM count (rounded, >= 1)
  std::vector<std::int64_t> widths;
  // Cells of more elements than this are left out (listed in the result): the whole grid is
  // prepared before timing, on the device and through the host oracle at once.
  std::int64_t max_elements = std::int64_t{1} << 28;
  // Cells of more elements than this compare a sample of check_sample_rows rows per plan
  // (harness/prepare.hpp sample_rows); smaller cells compare every row.
  std::int64_t check_full_up_to = std::int64_t{1} << 22;
  std::int64_t check_sample_rows = 64;
  std::vector<std::string> caches{"warm"};
  std::vector<std::string> timers{"graph"};
  int visits = 3;
  int samples = 2;
  std::uint64_t seed = 1;
  int device = 0;
};

// Throws UsageError with one line naming the problem: an unreadable file, bad JSON, anything
// configs/schema/grid.schema.json refuses (an unknown key, a field of the wrong type, a count
// that is not a whole number in range), or an op that is not a row op.
GridSettings load_grid_config(const std::filesystem::path& file);

// Throws UsageError (one line) when the settings cannot make a grid: no op chosen or one the
// config does not list, not a row op, no rows or widths, a width outside 1..2^20, a row count
// outside 1..kMaxDim, visits or samples outside 1..kMaxVisitsOrSamples, no cells on any device
// (the smallest above max_elements), or cold graph timing (its rotation sets would need 3x L2
// of copies for every cell: over 10^5 for the smallest). Touches no GPU.
void validate_grid_settings(const GridSettings& s);

}  // namespace kbench
