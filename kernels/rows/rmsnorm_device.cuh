// rmsnorm's per-vector helpers and its resident row, shared by the production kernels
// (rmsnorm.cu) and the builds of `kbench spec` (spec/rmsnorm_spec.cu), which instantiate the
// same row with more of its sizes fixed at compile time.
#pragma once

#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_device.cuh"
#include "kernels/rows/row_launch.hpp"

namespace kbench::rows {

// The tensors of one launch: x and r (row strides of their own), w, and the outputs h and y.
struct RmsnormTensors {
  const void* x;
  std::int64_t x_stride;
  const void* r;
  std::int64_t r_stride;
  const void* w;
  void* h;
  void* y;
};

// x + r rounded once to T.
template <class T>
__device__ __forceinline__ T add1(T a, T b) {
  if constexpr (kPacked16<T>) return __hadd(a, b);
  else return a + b;
}

template <class T>
__device__ __forceinline__ uint4 add16(const uint4& x, const uint4& r) {
  if constexpr (kPacked16<T>) {
    Pairs16<T> a, b, o;
    a.u = x;
    b.u = r;
#pragma unroll
    for (int j = 0; j < 4; ++j) o.p[j] = __hadd2(a.p[j], b.p[j]);
    return o.u;
  } else {
    Vec16<T> a, b, o;
    a.u = x;
    b.u = r;
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) o.v[j] = a.v[j] + b.v[j];
    return o.u;
  }
}

template <class T>
__device__ __forceinline__ float sumsq16(const uint4& h) {
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) s = fmaf(elem<T>(h, j), elem<T>(h, j), s);
  return s;
}

template <class T>
__device__ __forceinline__ float y1(T h, T w, float rstd) {
  return to_float(h) * rstd * to_float(w);
}

// y for one vector: h * rstd * w, rounded to T (16-bit pairs two at a time: the same bits).
template <class T>
__device__ __forceinline__ Vec16<T> norm16(const uint4& h, const uint4& w, float rstd) {
  Vec16<T> o;
  if constexpr (kPacked16<T>) {
    Pairs16<T> q;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      q.p[j] = pack_pair<T>(elem<T>(h, 2 * j) * rstd * elem<T>(w, 2 * j),
                            elem<T>(h, 2 * j + 1) * rstd * elem<T>(w, 2 * j + 1));
    o.u = q.u;
  } else {
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) o.v[j] = elem<T>(h, j) * rstd * elem<T>(w, j);
  }
  return o;
}

// A plain store: h written in pass 1 is read again in pass 2, so it must not be written
// evict-first as outputs are (store16).
template <class T>
__device__ __forceinline__ void store16_kept(T* p, const uint4& u, bool vec_ok) {
  if (vec_ok) {
    *reinterpret_cast<uint4*>(p) = u;
    return;
  }
  Vec16<T> r;
  r.u = u;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) p[j] = r.v[j];
}

__device__ __forceinline__ float inverse_rms(float sum_squares, int width, float eps) {
  return rsqrtf(sum_squares / static_cast<float>(width) + eps);
}

// One row of the resident plan, in the calling thread (`lanes` threads per row, K vectors of x
// and of r each). Every load of x and r is issued before any arithmetic; h is written as soon
// as its bits are known (before the reduction) and kept packed for y.
//
// What is known at compile time is a template parameter: `Aligned` (row_parts_for), and W and
// L, the width and lanes when they are positive (kbench spec's width build), else the
// arguments `width` and `lanes` (the production kernels pass W = L = 0).
template <class T, int K, bool Aligned, int W = 0, int L = 0>
__device__ __forceinline__ void rmsnorm_resident_row(const RmsnormTensors& t, std::int64_t rows, int width_arg,
                                                     int lanes_arg, float eps) {
  __shared__ float scratch[32];
  const int width = W > 0 ? W : width_arg;
  const int lanes = L > 0 ? L : lanes_arg;
  const auto [row, lane] = resident_slot(lanes);
  const bool active = row < rows;
  const std::int64_t rr = active ? row : 0;
  const T* xr = static_cast<const T*>(t.x) + row_offset(rr, t.x_stride);
  const T* res = static_cast<const T*>(t.r) + row_offset(rr, t.r_stride);
  const T* w = static_cast<const T*>(t.w);
  T* hr = static_cast<T*>(t.h) + row_offset(rr, width);
  T* yr = static_cast<T*>(t.y) + row_offset(rr, width);
  const RowParts p = row_parts_for<T, Aligned>(xr, active ? width : 0);
  const bool r_vec = same_phase_for<Aligned>(xr, res), h_vec = same_phase_for<Aligned>(xr, hr),
             y_vec = same_phase_for<Aligned>(xr, yr), w_vec = same_phase_for<Aligned>(xr, w);

  uint4 hv[K];
  {
    uint4 rx[K], rres[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int v = lane + k * lanes;
      if (v < p.nvec) {
        rx[k] = load16<T, Cache::normal>(xr + p.head + v * kVec<T>, true);
        rres[k] = load16<T, Cache::normal>(res + p.head + v * kVec<T>, r_vec);
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (lane + k * lanes < p.nvec) hv[k] = add16<T>(rx[k], rres[k]);
  }
  const T zero = from_float<T>(0.0f);
  const T hh = lane < p.head ? add1(xr[lane], res[lane]) : zero;
  const T ht = lane < p.tail ? add1(xr[p.tail_begin + lane], res[p.tail_begin + lane]) : zero;
  float ss = to_float(hh) * to_float(hh) + to_float(ht) * to_float(ht);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = lane + k * lanes;
    if (v < p.nvec) {
      ss += sumsq16<T>(hv[k]);
      Vec16<T> o;
      o.u = hv[k];
      store16<T>(hr + p.head + v * kVec<T>, o, h_vec);
    }
  }
  if (lane < p.head) hr[lane] = hh;
  if (lane < p.tail) hr[p.tail_begin + lane] = ht;
  const float rstd = inverse_rms(row_reduce(ss, lanes, scratch, SumOp{}), width, eps);
#pragma unroll
  for (int k = 0; k < K; ++k) keep_packed(hv[k]);  // only the packed h lives across the reduction

#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = lane + k * lanes;
    if (v < p.nvec) {
      const uint4 wv = load16<T, Cache::normal>(w + p.head + v * kVec<T>, w_vec);
      store16<T>(yr + p.head + v * kVec<T>, norm16<T>(hv[k], wv, rstd), y_vec);
    }
  }
  if (lane < p.head) yr[lane] = from_float<T>(y1(hh, w[lane], rstd));
  if (lane < p.tail) yr[p.tail_begin + lane] = from_float<T>(y1(ht, w[p.tail_begin + lane], rstd));
}

// ---- host: the launchers' view of a launch (rmsnorm.cu, spec/rmsnorm_spec.cu) -------------

inline RmsnormTensors rmsnorm_tensors(const LaunchArgs& a) {
  return RmsnormTensors{a.inputs[0].data, a.inputs[0].row_stride, a.inputs[1].data, a.inputs[1].row_stride,
                        a.inputs[2].data, a.outputs[0].data, a.outputs[1].data};
}

// x and r are [rows, width] views, w one row of width, h and y contiguous [rows, width].
inline RowGeometry checked_rmsnorm_geometry(const LaunchArgs& a) {
  const std::int64_t rows = rows_of(a.c), width = cols_of(a.c);
  check_row_tensor((a.c.op + " input x").c_str(), a.inputs[0], rows, width, false);
  check_row_tensor((a.c.op + " input r").c_str(), a.inputs[1], rows, width, false);
  check_row_tensor((a.c.op + " input w").c_str(), a.inputs[2], 1, width, true);
  check_row_tensor((a.c.op + " output h").c_str(), a.outputs[0], rows, width, true);
  check_row_tensor((a.c.op + " output y").c_str(), a.outputs[1], rows, width, true);
  return {rows, width, a.inputs[0].row_stride};
}

// Whether every tensor's rows are whole 16-byte vectors from a 16-byte boundary: the resident
// kernels' Aligned instantiation may run.
template <class T>
bool rmsnorm_rows_aligned(const RmsnormTensors& t, std::int64_t width) {
  return rows_aligned(static_cast<const T*>(t.x), t.x_stride, width) &&
         rows_aligned(static_cast<const T*>(t.r), t.r_stride, width) &&
         rows_aligned(static_cast<const T*>(t.w), width, width) &&
         rows_aligned(static_cast<const T*>(t.h), width, width) && rows_aligned(static_cast<const T*>(t.y), width, width);
}

}  // namespace kbench::rows
