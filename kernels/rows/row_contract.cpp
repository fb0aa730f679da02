#include "kernels/rows/row_contract.hpp"

#include <limits>
#include <stdexcept>

#include "kernels/rows/row_plan.hpp"

namespace kbench::rows {

std::string row_case_problem(const Case& c) {
  if (c.shape.size() != 2) return "row ops take a [rows, cols] shape";
  if (cols_of(c) > kMaxWidth) return "width above 2^20";
  if (rows_of(c) > kIndexLimit) return "more rows than a grid can hold";
  return {};
}

std::string row_tensor_problem(const DeviceTensor& t, std::int64_t rows, std::int64_t width,
                               bool is_output) {
  if (t.rows != rows || t.cols != width)
    return "shape " + std::to_string(t.rows) + "x" + std::to_string(t.cols) + ", expected " +
           std::to_string(rows) + "x" + std::to_string(width);
  if (rows < 0 || width < 0) return "negative shape";
  if (width > kMaxWidth)
    return "width " + std::to_string(width) + " is above the supported 2^20";
  if (rows > kIndexLimit)
    return "rows " + std::to_string(rows) + " exceed the grid limit (2^31 - 2^16)";
  if (rows > 1 && t.row_stride < width)
    return "row stride " + std::to_string(t.row_stride) + " below width " +
           std::to_string(width) + ": rows overlap";
  if (is_output && rows > 1 && t.row_stride != width)
    return "outputs must be contiguous (row stride " + std::to_string(t.row_stride) + ")";
  // The span in bytes must not overflow a 64-bit offset (rows * stride * size).
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(t.dtype));
  if (rows > 1 && t.row_stride > (std::numeric_limits<std::int64_t>::max() / es) / rows)
    return "row stride " + std::to_string(t.row_stride) + " overflows 64-bit byte offsets";
  if (rows > 0 && width > 0 && t.data == nullptr) return "null data pointer";
  if (reinterpret_cast<std::uintptr_t>(t.data) % static_cast<std::uintptr_t>(es) != 0)
    return "data not aligned to its element size";
  return {};
}

void check_row_tensor(const char* what, const DeviceTensor& t, std::int64_t rows,
                      std::int64_t width, bool is_output) {
  const std::string why = row_tensor_problem(t, rows, width, is_output);
  if (!why.empty()) throw std::invalid_argument(std::string(what) + ": " + why);
}

}  // namespace kbench::rows
