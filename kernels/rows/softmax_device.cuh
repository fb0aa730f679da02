// softmax's per-vector helpers and its resident row, shared by the production kernels
// (softmax.cu) and the builds of `kbench spec` (spec/softmax_spec.cu), which instantiate the
// same row with more of its sizes fixed at compile time.
#pragma once

#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_device.cuh"

namespace kbench::rows {

template <class T>
__device__ __forceinline__ Vec16<T> normalize16(const uint4& u, float shift, float inv) {
  Vec16<T> o;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) o.v[j] = from_float<T>(exp_diff(elem<T>(u, j) - shift) * inv);
  return o;
}

// y = e * inv for one vector's exps, rounded to T: 16-bit pairs two at a time (same bits as
// from_float per element).
template <class T>
__device__ __forceinline__ Vec16<T> scale16(const float (&e)[kVec<T>], float inv) {
  Vec16<T> o;
  if constexpr (kPacked16<T>) {
    Pairs16<T> q;
#pragma unroll
    for (int j = 0; j < 4; ++j) q.p[j] = pack_pair<T>(e[2 * j] * inv, e[2 * j + 1] * inv);
    o.u = q.u;
  } else {
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) o.v[j] = from_float<T>(e[j] * inv);
  }
  return o;
}

// One row of the resident plan, in the calling thread (`lanes` threads per row, K vectors
// each). The whole row is loaded before any arithmetic. Each element's exp is computed once and
// kept (in float, K x kVec registers: 16 for float32 in place of the raw vectors, 32 for 16-bit
// at K = 4) for the output pass; recomputing it there made 16-bit rows instruction-bound (two
// exp2f per element, ~6 instructions each, at twice the elements per byte of float32). The
// values and the order of the sum are those of computing it twice, so the output bits are too.
//
// What is known at compile time is a template parameter: `Aligned` (row_parts_for), and W and
// L, the width and lanes when they are positive (kbench spec's width build), else the
// arguments `width` and `lanes` (the production kernels pass W = L = 0).
template <class T, int K, bool Aligned, int W = 0, int L = 0>
__device__ __forceinline__ void softmax_resident_row(const T* __restrict__ x, std::int64_t x_stride,
                                                     T* __restrict__ y, std::int64_t rows, int width_arg,
                                                     int lanes_arg) {
  __shared__ float scratch[32];
  const int width = W > 0 ? W : width_arg;
  const int lanes = L > 0 ? L : lanes_arg;
  const auto [row, lane] = resident_slot(lanes);
  const bool active = row < rows;
  const T* xr = x + row_offset(active ? row : 0, x_stride);
  T* yr = y + row_offset(active ? row : 0, width);
  const RowParts p = row_parts_for<T, Aligned>(xr, active ? width : 0);
  const bool y_vec = same_phase_for<Aligned>(xr, yr);

  uint4 raw[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = lane + k * lanes;
    if (v < p.nvec) raw[k] = load16<T, Cache::normal>(xr + p.head + v * kVec<T>, true);
  }
  const float xh = lane < p.head ? to_float(xr[lane]) : -INFINITY;
  const float xt = lane < p.tail ? to_float(xr[p.tail_begin + lane]) : -INFINITY;

  float m = fmaxf(xh, xt);
  if constexpr (kPacked16<T>) {
    auto mp = pack_pair<T>(-INFINITY, -INFINITY);
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (lane + k * lanes < p.nvec) mp = max_pairs<T>(raw[k], mp);
    m = fmaxf(m, fmaxf(__low2float(mp), __high2float(mp)));
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (lane + k * lanes < p.nvec)
#pragma unroll
        for (int j = 0; j < kVec<T>; ++j) m = fmaxf(m, elem<T>(raw[k], j));
  }
  m = row_reduce(m, lanes, scratch, MaxOp{});
  const float shift = safe_shift(m);

  float e[K][kVec<T>];
  float s = exp_diff(xh - shift) + exp_diff(xt - shift);
#pragma unroll
  for (int k = 0; k < K; ++k)
    if (lane + k * lanes < p.nvec)
#pragma unroll
      for (int j = 0; j < kVec<T>; ++j) {
        e[k][j] = exp_diff(elem<T>(raw[k], j) - shift);
        s += e[k][j];
      }
  s = row_reduce(s, lanes, scratch, SumOp{});
  const float inv = 1.0f / s;

#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = lane + k * lanes;
    if (v < p.nvec) store16<T>(yr + p.head + v * kVec<T>, scale16<T>(e[k], inv), y_vec);
  }
  if (lane < p.head) yr[lane] = from_float<T>(exp_diff(xh - shift) * inv);
  if (lane < p.tail) yr[p.tail_begin + lane] = from_float<T>(exp_diff(xt - shift) * inv);
}

}  // namespace kbench::rows
