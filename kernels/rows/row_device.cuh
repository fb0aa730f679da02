// Device helpers shared by the row kernels: 16-byte row access with a per-row head, the
// reductions (warp shuffles, then one shared-memory step), the online softmax statistics with
// their -inf guard, and compensated float32 accumulation.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/dispatch.cuh"

namespace kbench::rows {

template <class T>
inline constexpr int kVec = 16 / sizeof(T);

// A row of n elements as [head scalars][nvec 16-byte vectors][tail scalars]. The head runs up
// to the first 16-byte boundary, so odd widths and strides (8193, 32769, stride = width + 3)
// still get aligned vector loads; head and tail have fewer than kVec elements each.
struct RowParts {
  int head;
  int nvec;
  int tail_begin;
  int tail;
};

template <class T>
__device__ __forceinline__ RowParts row_parts(const T* row, int n) {
  constexpr int V = kVec<T>;
  const int past = static_cast<int>((reinterpret_cast<std::uintptr_t>(row) & 15u) / sizeof(T));
  const int head = min(past ? V - past : 0, n);
  const int nvec = (n - head) / V;
  return {head, nvec, head + nvec * V, n - head - nvec * V};
}

// This thread's row and lane under a resident plan (`lanes` threads per row, blockDim.x / lanes
// rows per block). lanes is a power of two (resident_plan_problem), so shifts do what two
// runtime divisions did before the first load could be addressed; at 4096x4096 float32 row
// sum that moved 16.78 to 16.72 us (graph; run ce92d4 in docs/records/2026-11-30-rowsum-cub-explore).
struct RowSlot {
  std::int64_t row;
  int lane;
};

__device__ __forceinline__ RowSlot resident_slot(int lanes) {
  const int shift = __ffs(lanes) - 1;
  return {static_cast<std::int64_t>(blockIdx.x) * (blockDim.x >> shift) + (threadIdx.x >> shift),
          static_cast<int>(threadIdx.x) & (lanes - 1)};
}

// Another tensor can share the first one's vector positions only at the same 16-byte phase;
// otherwise its accesses at those positions go element by element (same values, same order).
__device__ __forceinline__ bool same_phase(const void* a, const void* b) {
  return ((reinterpret_cast<std::uintptr_t>(a) ^ reinterpret_cast<std::uintptr_t>(b)) & 15u) == 0;
}

// A row's parts in a kernel instantiated for aligned rows (every tensor's rows start on 16
// bytes and the width is whole vectors: rows_aligned, checked at launch) or for any rows. The
// aligned instantiation has no head, no tail and no per-tensor phase test, so the compiler
// drops the scalar edge code and the element-by-element fallbacks: ncu showed the generic
// resident kernels issuing about twice torch.compile's instructions for the same rows
// (rmsnorm bfloat16 16384x1024: 37% SM throughput against 19%; softmax backward float32
// 4096x4096: 31% against 16%), and holding more registers.
template <class T, bool Aligned>
__device__ __forceinline__ RowParts row_parts_for(const T* row, int n) {
  if constexpr (Aligned) return {0, n / kVec<T>, n, 0};
  else return row_parts(row, n);
}

template <bool Aligned, class A, class B>
__device__ __forceinline__ bool same_phase_for(const A* a, const B* b) {
  if constexpr (Aligned) return true;
  else return same_phase(a, b);
}

template <class T>
union Vec16 {
  uint4 u;
  T v[kVec<T>];
  __device__ Vec16() {}
};

// How a 16-byte load treats the caches. Chosen by measurement on the H200 (an unsaved tuning
// run timing every plan under each choice; the sweep in docs/kernels.md has the outcome):
//   normal    ld.global.nc (__ldg): data read once by a one-pass plan, and the first pass of a
//             two-pass plan. Evict-first loads (ld.global.cs) here made the resident backward
//             8-10% slower and float32 softmax 2-4% slower.
//   last_use  ld.global.cs (__ldcs), evict-first: the second read of a looped or split plan,
//             after which the row is dead. With __ldg there, the split backward at 64x131072
//             float32 ran 10% slower: the dead rows pushed out rows other blocks still re-read.
// Outputs are always written evict-first (__stcs): plain stores made looped softmax at
// 128x32769 float32 1.55x slower, the written lines evicting the rows its second pass re-reads.
// (torch.compile's looped softmax backward reads with L1 eviction priorities and an L2
// policy, evict-last then evict-first, and stores plainly; kbench's looped backward read so
// ran slower, float32 4096x4096 67.30 against 53.2 us with events on two H200s:
// docs/records/2026-12-01-session8.)
enum class Cache { normal, last_use };

template <class T, Cache C>
__device__ __forceinline__ uint4 load16(const T* p, bool vec_ok) {
  if (vec_ok) {
    const auto* q = reinterpret_cast<const uint4*>(p);
    if constexpr (C == Cache::last_use) return __ldcs(q);
    else return __ldg(q);
  }
  Vec16<T> r;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) r.v[j] = p[j];
  return r.u;
}

// K strided 16-byte loads, vectors first, first + step, ..., all issued before any is used:
// an index past `last` loads vector `last` again (the caller adds nothing for it). With a
// guarded load per vector, ptxas added each vector before issuing the next load, so K loads
// cost up to K round trips to DRAM (row_sum, seen in nvdisasm).
template <class T, Cache C, int K>
__device__ __forceinline__ void load_vectors(uint4 (&raw)[K], const T* vectors, int first,
                                             int step, int last) {
#pragma unroll
  for (int k = 0; k < K; ++k) raw[k] = load16<T, C>(vectors + min(first + k * step, last) * kVec<T>, true);
}

template <class T>
__device__ __forceinline__ void store16(T* p, const Vec16<T>& r, bool vec_ok) {
  if (vec_ok) {
    __stcs(reinterpret_cast<uint4*>(p), r.u);
    return;
  }
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) p[j] = r.v[j];
}

template <class T>
__device__ __forceinline__ float elem(const uint4& u, int j) {
  Vec16<T> r;
  r.u = u;
  return to_float(r.v[j]);
}

// ---- 16-bit pairs --------------------------------------------------------------------------
// A 16-byte vector of float16/bfloat16 is 4 registers of 2 elements. The resident softmax works
// on them packed where that is exact: the max (HMNMX2, one instruction per pair) and the
// rounding of two float results into one register (F2FP ... PACK_AB), which halves the
// per-element instructions that made the 16-bit rows instruction-bound.
template <class T>
struct PairOf {};
template <>
struct PairOf<__half> {
  using type = __half2;
};
template <>
struct PairOf<__nv_bfloat16> {
  using type = __nv_bfloat162;
};

template <class T>
inline constexpr bool kPacked16 = sizeof(T) == 2;

template <class T>
union Pairs16 {
  uint4 u;
  typename PairOf<T>::type p[4];
  __device__ Pairs16() {}
};

// Running max over the elements of u, in the 16-bit type. __hmax2 (max.f16x2 / max.bf16x2)
// returns the other operand when one is NaN, as fmaxf does, and max is exact in any precision
// (the conversion to float is monotonic), so the row max is the same value as the float path's.
template <class T>
__device__ __forceinline__ typename PairOf<T>::type max_pairs(const uint4& u,
                                                              typename PairOf<T>::type m) {
  Pairs16<T> r;
  r.u = u;
#pragma unroll
  for (int j = 0; j < 4; ++j) m = __hmax2(m, r.p[j]);
  return m;
}

// Two floats rounded to nearest into one pair (a in the low half, the lower address): the same
// bits as two from_float<T> calls.
template <class T>
__device__ __forceinline__ typename PairOf<T>::type pack_pair(float a, float b) {
  if constexpr (std::is_same_v<T, __half>) return __floats2half2_rn(a, b);
  else return __floats2bfloat162_rn(a, b);
}

// An empty asm that "changes" u: the compiler must re-derive floats from the packed registers
// after it instead of keeping the floats it converted before it live. bfloat16 -> float is a
// plain shift, which the compiler reuses across a reduction (two float registers per packed
// one: 99 registers for the bfloat16 resident backward against 64 for float16, whose
// conversion it does not reuse); laundering the raw vectors after the reduction stops that.
// No instruction is emitted.
__device__ __forceinline__ void keep_packed(uint4& u) {
  asm volatile("" : "+r"(u.x), "+r"(u.y), "+r"(u.z), "+r"(u.w));
}

// ---- reductions ----------------------------------------------------------------------------

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  // fmaxf drops a NaN operand; NaN in a row still reaches the output through the sum.
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Reduces over groups of `width` consecutive lanes (a power of two <= 32). Every lane of the
// warp must call it (inactive lanes with the neutral value).
template <class Op>
__device__ __forceinline__ float group_reduce(float v, int width, Op op) {
  for (int o = width >> 1; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Whole-block reduction, the result in every thread. `scratch` holds 32 floats. The trailing
// barrier keeps the next use of `scratch` (the next reduction or the next row) from
// overwriting it while a slower warp is still reading: the race the predecessor had.
template <class Op>
__device__ __forceinline__ float block_reduce(float v, float* scratch, Op op) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = group_reduce(v, 32, op);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < nw; ++w) r = op(r, scratch[w]);  // fixed order: same result everywhere
  __syncthreads();
  return r;
}

// Reduction over the `lanes` threads of a row: shuffles for lanes <= 32, then shared memory
// when a row spans several warps (lanes == blockDim.x then, uniform across the block).
template <class Op>
__device__ __forceinline__ float row_reduce(float v, int lanes, float* scratch, Op op) {
  if (lanes <= 32) return group_reduce(v, lanes, op);
  return block_reduce(v, scratch, op);
}

// Two sums over the `lanes` threads of a row at once, each added in the order row_reduce adds
// one: a row's statistics pay for one pass of shuffles and one trip through shared memory
// (two barriers) instead of one per sum. `scratch` holds 32 pairs.
__device__ __forceinline__ float2 row_reduce_sums(float2 v, int lanes, float2* scratch) {
  const int width = lanes <= 32 ? lanes : 32;
  for (int o = width >> 1; o > 0; o >>= 1) {
    v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
    v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
  }
  if (lanes <= 32) return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float2 r = scratch[0];
  for (int w = 1; w < nw; ++w) {
    r.x += scratch[w].x;
    r.y += scratch[w].y;
  }
  __syncthreads();  // as block_reduce: the next row's pairs wait until every warp has read these
  return r;
}

// ---- online softmax statistics ------------------------------------------------------------

inline constexpr float kLog2e = 1.4426950408889634f;

// exp(d) for d = x - max <= 0, computed from the exact difference (never x*log2e - m*log2e,
// which loses the low bits of d at |x| ~ 1e4). One MUFU.EX2 (ex2.approx.ftz): exp2f adds a
// range test and a rescale per element to get denormal results right, and those results
// (below 2^-126, then divided by a row sum >= 1) are far under every softmax tolerance's atol,
// so flushing them to zero changes nothing a check can see. The extra instructions counted in
// 16-bit softmax, which is close to instruction-bound (docs/kernels.md).
__device__ __forceinline__ float exp_diff(float d) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d * kLog2e));
  return r;
}

// The shift subtracted before exp: the running max, or 0 while a lane has seen only -inf, so
// that exp(-inf - (-inf)) = NaN never happens (the predecessor's masked-row bug).
__device__ __forceinline__ float safe_shift(float m) { return m == -INFINITY ? 0.0f : m; }

// (max, sum of exp(x - max)) of a part of a row.
struct Stats {
  float m;
  float s;
};

__device__ __forceinline__ Stats merge(Stats a, Stats b) {
  const float m = fmaxf(a.m, b.m);
  const float sh = safe_shift(m);
  // a.m = -inf means a.s = 0: 0 * exp(-inf) = 0. A NaN in s propagates.
  return {m, a.s * exp_diff(a.m - sh) + b.s * exp_diff(b.m - sh)};
}

__device__ __forceinline__ Stats group_merge(Stats v, int width) {
  for (int o = width >> 1; o > 0; o >>= 1) {
    Stats w{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = merge(v, w);
  }
  return v;
}

// `scratch` holds 64 floats.
__device__ __forceinline__ Stats block_merge(Stats v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = group_merge(v, 32);
  if (lane == 0) {
    scratch[warp] = v.m;
    scratch[32 + warp] = v.s;
  }
  __syncthreads();
  Stats r{scratch[0], scratch[32]};
  for (int w = 1; w < nw; ++w) r = merge(r, Stats{scratch[w], scratch[32 + w]});
  __syncthreads();
  return r;
}

// ---- compensated float32 sums --------------------------------------------------------------

// Kahan: a lane that adds thousands of chunk partials (widths to 2^20) keeps the low bits it
// would otherwise drop, so the error does not grow with the row (the predecessor's drift).
struct KahanSum {
  float s = 0.0f, c = 0.0f;
  __device__ void add(float x) {
    const float y = x - c;
    const float t = s + y;
    const float lost = (t - s) - y;
    c = isfinite(lost) ? lost : 0.0f;  // once s is inf, stay inf (inf - inf would be NaN)
    s = t;
  }
  __device__ void scale(float f) {
    s *= f;
    c *= f;
  }
  __device__ float value() const { return isfinite(s) ? s - c : s; }
};

}  // namespace kbench::rows
