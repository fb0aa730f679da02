// Contracts of the row launchers, checked on the host before any launch: a clear error,
// never a wrong answer.
//
// - Every tensor is a [rows, width] view with contiguous columns (DeviceTensor cannot express
//   anything else) and rows at least `width` apart: a row stride below the width would make
//   rows overlap, and an output written through overlapping rows depends on the order of
//   writes, so it is rejected. Outputs are contiguous (row stride == width).
// - Widths are at most 2^20 (kMaxWidth). Within a row the kernels index in 32 bits; the row
//   start is computed in 64 bits (row_offset below), so views with more than 2^31 elements,
//   or strides that put rows more than 2^31 elements apart, are addressed correctly.
// - The row count must fit a 1-D grid (2^31 - 1 blocks, minus 2^16 of headroom), and the split
//   plan's statistics (rows x segments entries) must fit 32-bit indices with the same headroom.
// - Data pointers must be aligned to their element size.
#pragma once

#include <cstdint>
#include <string>

#include "harness/problem.hpp"

namespace kbench::rows {

inline std::int64_t rows_of(const Case& c) { return c.shape.at(0); }
inline std::int64_t cols_of(const Case& c) { return c.shape.at(1); }

// Why a row op cannot take the case (empty when it can): a shape of another rank, a width
// above 2^20, more rows than a grid holds. Every row variant's unsupported() starts here.
std::string row_case_problem(const Case& c);

inline constexpr std::int64_t kIndexLimit = (std::int64_t{1} << 31) - (std::int64_t{1} << 16);

// The first element of row `r`: 64-bit arithmetic, shared by host tests and device code.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline std::int64_t row_offset(std::int64_t r, std::int64_t row_stride) {
  return r * row_stride;
}

// Whether every row of x starts on a 16-byte boundary and holds whole 16-byte vectors (the
// base, the stride and the width are multiples of 16 bytes): row_sum's aligned kernel then
// skips the per-row head and tail.
template <class T>
bool rows_aligned(const T* x, std::int64_t row_stride, std::int64_t width) {
  constexpr std::int64_t e = sizeof(T);
  return reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && row_stride * e % 16 == 0 &&
         width * e % 16 == 0;
}

// Throws std::invalid_argument naming `what` when `t` breaks a contract for [rows, width].
void check_row_tensor(const char* what, const DeviceTensor& t, std::int64_t rows,
                      std::int64_t width, bool is_output);

// Same checks as a string: empty when fine (for tests and unsupported()).
std::string row_tensor_problem(const DeviceTensor& t, std::int64_t rows, std::int64_t width,
                               bool is_output);

}  // namespace kbench::rows
