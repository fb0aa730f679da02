// Contracts of the gemm launchers, checked on the host before any launch: a clear error
// (std::invalid_argument), never a wrong answer.
//
// - A is [M, K], B is [K, N], C is [M, N]: the inner dimensions must agree (a K mismatch between
//   A and B is refused, not truncated to the smaller).
// - Columns are contiguous (DeviceTensor cannot say otherwise); row strides are at least the
//   width, so rows of a view never overlap; C is contiguous (row stride N).
// - M and N are at least 1; K = 0 gives C = 0.
// - M, N and K are below 2^31 - 2^16, so that tile coordinates and in-tile indices fit 32 bits;
//   element offsets are computed in 64 bits (row * stride), so spans beyond 2^31 elements are
//   addressed correctly. The one-dimensional grid (tiles of M times tiles of N) must fit
//   2^31 - 1 blocks.
// - C must not overlap A or B: the kernels read A and B while other blocks write C.
// - Data pointers are aligned to their element size, and all three on the device.
#pragma once

#include <cstdint>
#include <string>

#include "harness/problem.hpp"

namespace kbench::gemm {

inline constexpr std::int64_t kDimLimit = (std::int64_t{1} << 31) - (std::int64_t{1} << 16);
inline constexpr std::int64_t kGridLimit = (std::int64_t{1} << 31) - 1;

// Why the tensors cannot be multiplied (empty when they can): [M, K] . [K, N] -> [M, N].
std::string gemm_problem(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c);
// The same where A lies in memory as A^T ([K, M] rows) and/or B as B^T ([N, K] rows).
std::string gemm_problem(const DeviceTensor& a, bool a_transposed, const DeviceTensor& b, bool b_transposed,
                         const DeviceTensor& c);

// Why a grid of BM x BN tiles cannot cover M x N (empty when it can).
std::string grid_problem(std::int64_t m, std::int64_t n, int bm, int bn);

// Throws std::invalid_argument with gemm_problem's reason.
void check_gemm(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c);

// Whether every row of t starts on a 16-byte boundary (base and stride multiples of 16 bytes)
// and is whole 16-byte chunks long: the cp.async kernels copy 16 bytes at a time and need both.
// A row ending inside a chunk would be copied with a shorter source size, which reads only what
// it names, but compute-sanitizer holds every such copy to all 16 bytes, and the last row of a
// buffer cut at its end then reads past the buffer (gemm 1x1x1 float32 on the H200: a 16-byte
// copy from a 4-byte buffer). Such operands take the SIMT path.
bool rows_aligned16(const DeviceTensor& t);

// Why a case of the gemm op cannot run at all (a shape of another rank, M or N of zero).
std::string gemm_case_problem(const Case& c);

}  // namespace kbench::gemm
