#include "kernels/gemm/gemm_contract.hpp"

#include <limits>
#include <stdexcept>

namespace kbench::gemm {

namespace {

std::string dims(std::int64_t r, std::int64_t c) { return std::to_string(r) + "x" + std::to_string(c); }

std::string view_problem(const char* name, const DeviceTensor& t, bool output) {
  const std::string who = std::string(name) + " ";
  if (t.rows < 0 || t.cols < 0) return who + "has a negative shape";
  if (t.rows > kDimLimit || t.cols > kDimLimit) return who + dims(t.rows, t.cols) + ": a dimension above 2^31 - 2^16";
  if (t.rows > 1 && t.row_stride < t.cols)
    return who + "row stride " + std::to_string(t.row_stride) + " below its width " + std::to_string(t.cols) + ": rows overlap";
  if (output && t.rows > 1 && t.row_stride != t.cols)
    return who + "must be contiguous (row stride " + std::to_string(t.row_stride) + ", width " + std::to_string(t.cols) + ")";
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(t.dtype));
  if (t.rows > 1 && t.row_stride > (std::numeric_limits<std::int64_t>::max() / es) / t.rows)
    return who + "row stride " + std::to_string(t.row_stride) + " overflows 64-bit byte offsets";
  if (t.rows > 0 && t.cols > 0 && t.data == nullptr) return who + "has a null data pointer";
  if (reinterpret_cast<std::uintptr_t>(t.data) % static_cast<std::uintptr_t>(es) != 0)
    return who + "is not aligned to its element size";
  return {};
}

// [first, last) bytes of a view's span.
struct Span {
  std::uintptr_t first = 0, last = 0;
};

Span span_of(const DeviceTensor& t) {
  const auto first = reinterpret_cast<std::uintptr_t>(t.data);
  const std::int64_t elements = t.rows == 0 || t.cols == 0 ? 0 : (t.rows - 1) * t.row_stride + t.cols;
  return {first, first + static_cast<std::uintptr_t>(elements) * dtype_size(t.dtype)};
}

bool overlap(const Span& x, const Span& y) { return x.first < y.last && y.first < x.last; }

}  // namespace

std::string gemm_problem(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c) {
  return gemm_problem(a, false, b, false, c);
}

std::string gemm_problem(const DeviceTensor& a, bool a_transposed, const DeviceTensor& b, bool b_transposed,
                         const DeviceTensor& c) {
  if (a.dtype != b.dtype || a.dtype != c.dtype) return "A, B and C must share one dtype";
  for (const auto& [name, t, out] : {std::tuple{"A", &a, false}, std::tuple{"B", &b, false}, std::tuple{"C", &c, true}})
    if (std::string why = view_problem(name, *t, out); !why.empty()) return why;
  // The logical [M, K] and [K, N] of operands that may lie transposed in memory.
  const std::int64_t am = a_transposed ? a.cols : a.rows, ak = a_transposed ? a.rows : a.cols;
  const std::int64_t bk = b_transposed ? b.cols : b.rows, bn = b_transposed ? b.rows : b.cols;
  if (ak != bk) return "inner dimensions differ: A is " + dims(am, ak) + ", B is " + dims(bk, bn);
  if (c.rows != am || c.cols != bn) return "C is " + dims(c.rows, c.cols) + ", expected " + dims(am, bn);
  if (c.rows < 1 || c.cols < 1) return "M and N must be at least 1 (C is " + dims(c.rows, c.cols) + ")";
  if (overlap(span_of(c), span_of(a)) || overlap(span_of(c), span_of(b))) return "C overlaps an input";
  return {};
}

std::string grid_problem(std::int64_t m, std::int64_t n, int bm, int bn) {
  const std::int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
  if (tiles > kGridLimit)
    return std::to_string(tiles) + " tiles of " + dims(bm, bn) + " exceed the grid limit 2^31 - 1";
  return {};
}

void check_gemm(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c) {
  const std::string why = gemm_problem(a, b, c);
  if (!why.empty()) throw std::invalid_argument("gemm: " + why);
}

bool rows_aligned16(const DeviceTensor& t) {
  const auto es = static_cast<std::int64_t>(dtype_size(t.dtype));
  return reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0 && (t.cols * es) % 16 == 0 &&
         (t.rows <= 1 || (t.row_stride * es) % 16 == 0);
}

std::string gemm_case_problem(const Case& c) {
  if (c.shape.size() != 3) return "gemm takes an [M, N, K] shape";
  if (c.shape[0] < 1 || c.shape[1] < 1) return "M and N must be at least 1";
  if (c.shape[2] < 0) return "K must not be negative";
  for (const std::int64_t d : c.shape)
    if (d > kDimLimit) return "a dimension above 2^31 - 2^16";
  return {};
}

}  // namespace kbench::gemm
