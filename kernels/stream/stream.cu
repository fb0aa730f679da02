// stream variants: one grid-stride kernel per dtype and mix, 16-byte loads and stores, four
// vectors of each input in flight per thread before the first store (as copy's vec16, which is
// the 1:1 case); the read-only streams (W = 0) take one 16 KiB chunk a block at a time and write
// its largest element (stream.hpp).
//   vec16     plain loads and stores
//   vec16_cs  evict-first loads and stores (ld.global.cs, st.global.cs): lines not kept in L2
// A sweep takes the faster of the two at each size as the roofline.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/errors.hpp"
#include "kernels/common/dispatch.cuh"
#include "kernels/common/grid.hpp"
#include "kernels/stream/stream.hpp"

namespace kbench {

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
static_assert(kStreamChunkBytes == kThreads * kUnroll * 16, "a read-only round of a block is one chunk");

// The streams as 16-byte vectors.
struct Streams {
  const uint4* x[kStreamMaxReads];
  uint4* y[kStreamMaxWrites];
};

template <bool kStreaming>
__device__ __forceinline__ uint4 load(const uint4* p) {
  if constexpr (kStreaming) return __ldcs(p);
  else return *p;
}
template <bool kStreaming>
__device__ __forceinline__ void store(uint4* p, uint4 v) {
  if constexpr (kStreaming) __stcs(p, v);
  else *p = v;
}

// A thread's round: v[u][r] = x_r[i + u step] for every u with i + u step < n_vec, all issued
// before any is used.
template <int R, bool kStreaming>
__device__ __forceinline__ void load_round(uint4 (&v)[kUnroll][R], const Streams& s, std::int64_t i, std::int64_t step,
                                           std::int64_t n_vec) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (i + u * step < n_vec)
#pragma unroll
      for (int r = 0; r < R; ++r) v[u][r] = load<kStreaming>(s.x[r] + i + u * step);
}

// A 16-byte vector of T as floats (exact) and back (one rounding to T).
template <class T>
struct Lanes {
  static constexpr int kCount = 16 / sizeof(T);
  static __device__ __forceinline__ void unpack(const uint4& v, float (&f)[kCount]) {
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int i = 0; i < kCount; ++i) f[i] = to_float(e[i]);
  }
  static __device__ __forceinline__ uint4 pack(const float (&f)[kCount]) {
    uint4 v;
    T* e = reinterpret_cast<T*>(&v);
#pragma unroll
    for (int i = 0; i < kCount; ++i) e[i] = from_float<T>(f[i]);
    return v;
  }
  static __device__ __forceinline__ float largest(float m, const uint4& v) {
    float f[kCount];
    unpack(v, f);
#pragma unroll
    for (int i = 0; i < kCount; ++i) m = fmaxf(m, f[i]);
    return m;
  }
};

// One vector of every output: the inputs' sum, left to right in float32, rounded once to T (a
// copy, R = 1, passes the bits through).
template <class T, int R>
__device__ __forceinline__ uint4 combine(const uint4 (&v)[R]) {
  using L = Lanes<T>;
  if constexpr (R == 1) {
    return v[0];
  } else {
    float sum[L::kCount], f[L::kCount];
    L::unpack(v[0], sum);
#pragma unroll
    for (int r = 1; r < R; ++r) {
      L::unpack(v[r], f);
#pragma unroll
      for (int i = 0; i < L::kCount; ++i) sum[i] += f[i];
    }
    return L::pack(sum);
  }
}

// R inputs, W >= 1 outputs: n_vec whole vectors, then `tail` (< one vector) single elements after
// them, done by the first threads. kUnroll vectors of each input a thread per round, all loaded
// before the first use, the last round's past n_vec skipped: a thread never waits on one load at
// a time. (A remainder loop of single loads, the first version, left the read-only stream at 2835
// GB/s at 32 MiB, where row_sum read as much at 3719: archive/sweep/sweep-20261202T181504Z-70e0a0.json.gz,
// cupti.)
template <class T, int R, int W, bool kStreaming>
__global__ void __launch_bounds__(kThreads) stream_kernel(Streams s, std::int64_t n_vec, int tail) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n_vec; i += kUnroll * stride) {
    uint4 v[kUnroll][R];
    load_round<R, kStreaming>(v, s, i, stride, n_vec);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i + u * stride >= n_vec) continue;
      const uint4 out = combine<T, R>(v[u]);
#pragma unroll
      for (int w = 0; w < W; ++w) store<kStreaming>(s.y[w] + i + u * stride, out);
    }
  }
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (first < tail) {
    const std::int64_t at = Lanes<T>::kCount * n_vec + first;
    const T* x0 = reinterpret_cast<const T*>(s.x[0]);
    float sum = to_float(x0[at]);
#pragma unroll
    for (int r = 1; r < R; ++r) sum += to_float(reinterpret_cast<const T*>(s.x[r])[at]);
#pragma unroll
    for (int w = 0; w < W; ++w) reinterpret_cast<T*>(s.y[w])[at] = R == 1 ? x0[at] : from_float<T>(sum);
  }
}

// R inputs, nothing written but each chunk's largest element: a block takes chunk c (kThreads x
// kUnroll vectors, every load of it issued at once), reduces it through shuffles and shared
// memory and writes chunks_max[c]; then chunk c + gridDim.x. No grid-wide step (a first version
// folded one maximum for the whole grid through atomics on one address and a last-block count,
// and read 32 MiB at 3040 GB/s where row_sum reached 3719: archive/sweep/sweep-20261202T182122Z-bda4f9.json.gz).
template <class T, int R, bool kStreaming>
__global__ void __launch_bounds__(kThreads) stream_max_kernel(Streams s, T* __restrict__ chunk_max, std::int64_t n_vec,
                                                              int tail, std::int64_t chunks) {
  constexpr int kPerChunk = kThreads * kUnroll;  // vectors
  __shared__ float warp_max[kThreads / 32];
  for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const std::int64_t base = c * kPerChunk + threadIdx.x;
    uint4 v[kUnroll][R];
    load_round<R, kStreaming>(v, s, base, kThreads, n_vec);
    float m = -INFINITY;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * kThreads < n_vec)
#pragma unroll
        for (int r = 0; r < R; ++r) m = Lanes<T>::largest(m, v[u][r]);
    if (c == chunks - 1 && static_cast<int>(threadIdx.x) < tail)  // the elements after the last vector
#pragma unroll
      for (int r = 0; r < R; ++r) m = fmaxf(m, to_float(reinterpret_cast<const T*>(s.x[r])[Lanes<T>::kCount * n_vec + threadIdx.x]));
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
      float b = warp_max[0];
#pragma unroll
      for (int w = 1; w < kThreads / 32; ++w) b = fmaxf(b, warp_max[w]);
      chunk_max[c] = from_float<T>(b);  // exact: a value of T
    }
    __syncthreads();  // warp_max is free for the next chunk
  }
}

template <class T, int R, int W, bool kStreaming>
void launch_mix(const Streams& s, void* chunk_max, std::int64_t n, cudaStream_t stream) {
  constexpr int kCount = Lanes<T>::kCount;
  const std::int64_t n_vec = n / kCount;
  const int tail = static_cast<int>(n % kCount);
  if constexpr (W == 0) {
    const std::int64_t chunks = stream_chunks(n, sizeof(T));
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(chunks, grid_stride_blocks(chunks * kThreads, kThreads)));
    stream_max_kernel<T, R, kStreaming><<<std::max(1u, blocks), kThreads, 0, stream>>>(s, static_cast<T*>(chunk_max), n_vec,
                                                                                        tail, chunks);
  } else {
    const auto blocks = std::max(1u, grid_stride_blocks(n_vec, kThreads));
    stream_kernel<T, R, W, kStreaming><<<blocks, kThreads, 0, stream>>>(s, n_vec, tail);
  }
  KB_CUDA_LAUNCH();
}

template <class T, int R, bool kStreaming>
void launch_reads(const Streams& s, int writes, void* chunk_max, std::int64_t n, cudaStream_t stream) {
  if (writes == 0) launch_mix<T, R, 0, kStreaming>(s, chunk_max, n, stream);
  else if (writes == 1) launch_mix<T, R, 1, kStreaming>(s, chunk_max, n, stream);
  else launch_mix<T, R, 2, kStreaming>(s, chunk_max, n, stream);
}

template <class T, bool kStreaming>
void launch_typed(const Streams& s, int reads, int writes, void* chunk_max, std::int64_t n, cudaStream_t stream) {
  if (reads == 1) launch_reads<T, 1, kStreaming>(s, writes, chunk_max, n, stream);
  else if (reads == 2) launch_reads<T, 2, kStreaming>(s, writes, chunk_max, n, stream);
  else launch_reads<T, 3, kStreaming>(s, writes, chunk_max, n, stream);
}

template <bool kStreaming>
void launch_hinted(DType t, const Streams& s, int reads, int writes, void* chunk_max, std::int64_t n, cudaStream_t stream) {
  dispatch_dtype(t, [&]<class T>() { launch_typed<T, kStreaming>(s, reads, writes, chunk_max, n, stream); });
}

}  // namespace

void launch_stream(DType dtype, const void* const* x, int reads, void* const* y, int writes, void* chunk_max,
                   std::int64_t n, bool streaming, cudaStream_t stream) {
  if (reads < 1 || reads > kStreamMaxReads || writes < 0 || writes > kStreamMaxWrites)
    throw std::invalid_argument("stream: " + std::to_string(reads) + " reads and " + std::to_string(writes) +
                                " writes (1 to 3, 0 to 2)");
  Streams s{};
  for (int r = 0; r < reads; ++r) {
    if (!aligned16(x[r])) throw std::invalid_argument("stream: inputs must be 16-byte aligned");
    s.x[r] = static_cast<const uint4*>(x[r]);
  }
  for (int w = 0; w < writes; ++w) {
    if (!aligned16(y[w])) throw std::invalid_argument("stream: outputs must be 16-byte aligned");
    s.y[w] = static_cast<uint4*>(y[w]);
  }
  if (writes == 0 && chunk_max == nullptr) throw std::invalid_argument("stream: the read-only stream needs its output");
  if (streaming) launch_hinted<true>(dtype, s, reads, writes, chunk_max, n, stream);
  else launch_hinted<false>(dtype, s, reads, writes, chunk_max, n, stream);
}

void register_stream(Registry& r) {
  r.add_op(make_stream_op());
  for (const bool streaming : {false, true}) {
    Variant v = make_variant("stream", streaming ? "vec16_cs" : "vec16",
                             streaming ? "grid-stride kernel, 16-byte evict-first loads and stores (.cs), 4 of each input in flight per thread"
                                       : "grid-stride kernel, 16-byte loads and stores, 4 of each input in flight per thread",
                             [streaming](const LaunchArgs& a) {
                               const TrafficMix mix = stream_mix(a.c);
                               const void* x[kStreamMaxReads] = {};
                               void* y[kStreamMaxWrites] = {};
                               for (int i = 0; i < mix.reads; ++i) x[i] = a.inputs[i].data;
                               for (int i = 0; i < mix.writes; ++i) y[i] = a.outputs[i].data;
                               launch_stream(a.c.dtype, x, mix.reads, y, mix.writes,
                                             mix.writes == 0 ? a.outputs[0].data : nullptr, a.c.shape.at(0), streaming,
                                             a.stream);
                             });
    r.add_variant(std::move(v));
  }
}

}  // namespace kbench
