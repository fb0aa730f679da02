// What the row ops' definitions share (their *_op.cpp, host code): the op's common fields, the
// tensors of a [rows, cols] case, Eigen views of host tensors, rows split across the CPU's
// cores, and the FP64 softmax that softmax's oracle and softmax_backward's inputs both need.
#pragma once

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <functional>

#include "registry/registry.hpp"

namespace kbench::rows {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A row op named `name`: [rows, cols] shapes, its sources the row family's folder, no flops
// counted (memory-bound), its oracle computed row by row (Problem::oracle_by_row: an op whose
// per-row output needs other rows must clear it); the caller sets its tensors, inputs, oracle,
// tolerance and bytes.
Op make_row_op(const char* name, const char* summary);

// An input with the case's row stride, and a contiguous output of `cols` columns.
TensorDesc row_input(const Case& c, const char* name);
TensorDesc row_output(const Case& c, const char* name, std::int64_t cols);

Eigen::Map<const RowMajor> as_matrix(const HostTensor& t);
Eigen::Map<RowMajor> as_matrix(HostTensor& t);

// fn(r) for every row r, rows split across the CPU's cores (each row is one thread's).
void for_each_row(Eigen::Index rows, Eigen::Index cols, const std::function<void(Eigen::Index)>& fn);

// Softmax in double with the kernels' semantics: -inf entries give 0, a row of only -inf gives
// NaN (0/0), NaN or +inf anywhere gives a row of NaN. y must already have x's shape.
void softmax_rows(const Eigen::Ref<const RowMajor>& x, Eigen::Ref<RowMajor> y);

// float32's unit roundoff, the unit the row tolerances are written in.
inline double u32() { return std::ldexp(1.0, -24); }

}  // namespace kbench::rows
