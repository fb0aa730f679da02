// What `kbench spec` fixes at compile time: the widths it builds, and the resident plan of
// each (16-byte vectors per thread, threads per row) as constexpr, so that the width build can
// be instantiated with them. Plain C++ (no CUDA), so the CPU tests hold it to row_plan.
//
// The rules below restate the few fields of softmax's and rmsnorm's RowRules that a block
// resident plan reads (they are private to softmax.cu and rmsnorm.cu); tests/cpu/test_spec.cpp
// checks them, and the plans they give, against the registered rules and row_plan, and every
// spec launcher checks the plan it was handed against its instantiation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kbench::rows::spec {

// The widths the width build is instantiated for (the issue's: powers of two, one past, and a
// few vectors past).
inline constexpr int kSpecWidths[] = {4096, 4097, 4104, 8192, 8200};

constexpr bool is_spec_width(std::int64_t w) {
  for (int s : kSpecWidths)
    if (s == w) return true;
  return false;
}

struct SpecRules {
  int max_threads_4;       // launch bound of 4-vector resident kernels
  int max_threads_8;       // launch bound of 8-vector resident kernels
  bool eight_vectors_f32;  // float32 block plans hold 8 vectors a thread up to 8 x max_threads_8
  constexpr int max_threads(int vecs) const { return vecs == 8 ? max_threads_8 : max_threads_4; }
};

inline constexpr SpecRules kSoftmaxSpecRules{1024, 256, true};  // softmax.cu's kRules
inline constexpr SpecRules kRmsnormSpecRules{512, 128, false};  // rmsnorm.cu's kRules

// The runtime build loops over its vectors and holds no row, so one kernel serves every plan:
// its launch bound is the largest block any resident plan launches.
inline constexpr int kRuntimeMaxThreads = 1024;

// A block resident plan: `vecs` 16-byte vectors per thread, `lanes` threads (one row per block).
// vecs == 0: no resident plan holds the row.
struct BlockShape {
  int vecs = 0;
  int lanes = 0;
};

constexpr int pow2_at_least(std::int64_t v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

// row_plan's resident plan for rows of `width` elements of `elem_bytes` bytes, in the branch
// every spec width takes (512 vectors or more: a block per row, never a warp): 8 vectors a
// thread for float32 where the op allows it and they fit, else 4; the fewest power-of-two
// threads, at least 64, that cover the row.
constexpr BlockShape block_shape(std::int64_t width, int elem_bytes, const SpecRules& r) {
  const int v = 16 / elem_bytes;
  const std::int64_t nvec = width / v;  // whole vectors: the head and tail are scalars (RowRules::edges_as_scalars)
  const bool eight = r.eight_vectors_f32 && elem_bytes == 4 && nvec <= 8 * std::int64_t{r.max_threads_8};
  const int vecs = eight ? 8 : 4;
  const int need = pow2_at_least((nvec + vecs - 1) / vecs);
  const int lanes = need > 64 ? need : 64;
  if (lanes > r.max_threads(vecs)) return {};
  return {vecs, lanes};
}

}  // namespace kbench::rows::spec
