// How a two-read, one-write row stream is served fastest on this GPU: softmax_backward's
// traffic (dx = y (dy - dot(y, dy)) per row) at 4096x4096 and 8192x8192, float32 and float16,
// under the designs and cache policies the kbench kernel could take, beside the same traffic
// with no reduction (c = a + b, the 2:1 roofline). Issue 14: torch.compile's backward reads
// 4.39-4.41 TB/s there, above the 1:1 copy, and kbench's resident kernel 4.14-4.31.
//
// Not a kbench experiment: a probe for the next kernel change, run by scripts/gpu_session.sh
// (MICROBENCH=stream_mix). The designs: a block per row in registers (kbench's resident plan), the
// same as a persistent grid with and without a bulk L2 prefetch of the next row, two passes
// (torch.compile's looped reduction) under cache policies, and c = a + b. Each launch reads its own input set (sets totalling over 3x L2, so
// every launch starts cold); a sample is 20 launches back to back between two events; variants
// take turns, 7 rounds; the table gives each variant's median sample per launch. Every variant's
// dx is compared with the first's (max |difference|), so that a fast wrong kernel shows.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe_check.cuh"

enum class Load { ldg, evict_first, evict_last };
enum class Store { streaming, plain };

template <Load L>
__device__ __forceinline__ uint4 load(const void* p) {
  uint4 r;
  if constexpr (L == Load::ldg) {
    r = __ldg(static_cast<const uint4*>(p));
  } else {
    unsigned long long policy;
    if constexpr (L == Load::evict_first)
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    else
      asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p), "l"(policy));
  }
  return r;
}

template <Store S>
__device__ __forceinline__ void store(void* p, uint4 v) {
  if constexpr (S == Store::streaming) __stcs(static_cast<uint4*>(p), v);
  else *static_cast<uint4*>(p) = v;
}

template <class T>
struct Pack;
template <>
struct Pack<float> {
  static constexpr int n = 4;
  __device__ static float get(const uint4& u, int j) { return __uint_as_float((&u.x)[j]); }
  __device__ static void set(uint4& u, int j, float f) { (&u.x)[j] = __float_as_uint(f); }
};
template <>
struct Pack<__half> {
  static constexpr int n = 8;
  __device__ static float get(const uint4& u, int j) {
    return __half2float(reinterpret_cast<const __half*>(&u)[j]);
  }
  __device__ static void set(uint4& u, int j, float f) { reinterpret_cast<__half*>(&u)[j] = __float2half(f); }
};

template <int Threads>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if constexpr (Threads > 32) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < Threads / 32 ? scratch[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
  }
  return v;
}

// One row held in registers, Threads x K vectors: load y and dy, reduce the dot across the
// block, write dx (kbench's resident design).
template <class T, int Threads, int K, Load L, Store S>
__device__ __forceinline__ void row_in_registers(const T* y, const T* dy, T* dx, long long base, float* scratch) {
  using P = Pack<T>;
  uint4 a[K], b[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int e = (threadIdx.x + k * Threads) * P::n;
    a[k] = load<L>(y + base + e);
    b[k] = load<L>(dy + base + e);
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int j = 0; j < P::n; ++j) s += P::get(a[k], j) * P::get(b[k], j);
  const float dot = block_sum<Threads>(s, scratch);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    uint4 o;
#pragma unroll
    for (int j = 0; j < P::n; ++j) P::set(o, j, P::get(a[k], j) * (P::get(b[k], j) - dot));
    store<S>(dx + base + (threadIdx.x + k * Threads) * P::n, o);
  }
}

// A block per row, the row in registers.
template <class T, int Threads, int K, Load L, Store S>
__global__ void __launch_bounds__(Threads) resident(const T* y, const T* dy, T* dx, int width, int) {
  __shared__ float scratch[32];
  row_in_registers<T, Threads, K, L, S>(y, dy, dx, static_cast<long long>(blockIdx.x) * width, scratch);
}

// The resident design as a persistent grid (as many blocks as fit at once, rows in turn), with
// or without a bulk L2 prefetch of the block's next row before this row's reduction.
template <class T, int Threads, int K, bool Prefetch>
__global__ void __launch_bounds__(Threads) persistent(const T* y, const T* dy, T* dx, int width, int rows) {
  __shared__ float scratch[32];
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long base = static_cast<long long>(row) * width;
    if (Prefetch && threadIdx.x == 0 && row + gridDim.x < rows) {
      const long long next = base + static_cast<long long>(gridDim.x) * width;
      const unsigned bytes = width * sizeof(T);
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(y + next), "r"(bytes) : "memory");
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(dy + next), "r"(bytes) : "memory");
    }
    row_in_registers<T, Threads, K, Load::ldg, Store::streaming>(y, dy, dx, base, scratch);
  }
}

// A block per row, two passes over it (torch.compile's looped reduction): the dot, then dx from
// a second read, which L1 policy `L1st` and `L2nd` make an L2 hit or not.
template <class T, int Threads, Load L1st, Load L2nd, Store S>
__global__ void __launch_bounds__(Threads) looped(const T* y, const T* dy, T* dx, int width, int) {
  __shared__ float scratch[32];
  using P = Pack<T>;
  const long long base = static_cast<long long>(blockIdx.x) * width;
  float s = 0.0f;
  for (int e = threadIdx.x * P::n; e < width; e += Threads * P::n) {
    const uint4 a = load<L1st>(y + base + e), b = load<L1st>(dy + base + e);
#pragma unroll
    for (int j = 0; j < P::n; ++j) s += P::get(a, j) * P::get(b, j);
  }
  const float dot = block_sum<Threads>(s, scratch);
  for (int e = threadIdx.x * P::n; e < width; e += Threads * P::n) {
    const uint4 a = load<L2nd>(y + base + e), b = load<L2nd>(dy + base + e);
    uint4 o;
#pragma unroll
    for (int j = 0; j < P::n; ++j) P::set(o, j, P::get(a, j) * (P::get(b, j) - dot));
    store<S>(dx + base + e, o);
  }
}

// The same bytes with no reduction: c = a + b over `count` elements, grid-stride, 16-byte vectors.
template <class T, Store S>
__global__ void __launch_bounds__(256) stream21(const T* y, const T* dy, T* dx, int count, int) {
  using P = Pack<T>;
  const long long n = count / P::n;
  for (long long v = blockIdx.x * 256ll + threadIdx.x; v < n; v += 256ll * gridDim.x) {
    const uint4 a = load<Load::ldg>(y + v * P::n), b = load<Load::ldg>(dy + v * P::n);
    uint4 o;
#pragma unroll
    for (int j = 0; j < P::n; ++j) P::set(o, j, P::get(a, j) + P::get(b, j));
    store<S>(dx + v * P::n, o);
  }
}

using AnyKernel = void (*)(const void*, const void*, void*, int, int);

struct Variant {
  std::string name;
  AnyKernel kernel;
  dim3 grid, block;
  bool same_result;  // compared with the first variant's dx
};

// Every kernel takes (y, dy, dx, width, rows); only the persistent ones read rows.
template <class T>
using KernelT = void (*)(const T*, const T*, T*, int, int);
template <class T>
using PersistentT = KernelT<T>;

template <class T>
Variant make(std::string name, KernelT<T> k, dim3 grid, int threads, bool same = true) {
  return {std::move(name), reinterpret_cast<AnyKernel>(k), grid, dim3(threads), same};
}

template <class T>
Variant make_persistent(std::string name, PersistentT<T> k, int threads) {
  int per_sm = 0, sms = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, 0));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return {std::move(name) + " (" + std::to_string(per_sm) + "/SM)", reinterpret_cast<AnyKernel>(k),
          dim3(per_sm * sms), dim3(threads), true};
}

template <class T>
void run(int rows, int width, const char* dtype) {
  using P = Pack<T>;
  const int nvec = width / P::n;
  const size_t bytes = static_cast<size_t>(rows) * width * sizeof(T);
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  const int sets = std::max(2, static_cast<int>(std::ceil(3.0 * l2 / (3.0 * bytes))));
  std::vector<T*> y(sets), dy(sets), dx(sets);
  std::vector<T> host(static_cast<size_t>(rows) * width);
  srand(7);
  for (auto& v : host) v = static_cast<T>(static_cast<float>(rand()) / RAND_MAX / width * 2.0f);
  for (int s = 0; s < sets; ++s) {
    CHECK(cudaMalloc(&y[s], bytes));
    CHECK(cudaMalloc(&dy[s], bytes));
    CHECK(cudaMalloc(&dx[s], bytes));
    CHECK(cudaMemcpy(y[s], host.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy[s], host.data(), bytes, cudaMemcpyHostToDevice));
  }
  const dim3 g(rows);
  std::vector<Variant> vs;
  // kbench's plan at these widths: 512 threads, nvec / 512 vectors each (float16 4096: 256 x 2).
  if (nvec == 1024) {
    vs.push_back(make<T>("resident 512x2 ldg stcs", resident<T, 512, 2, Load::ldg, Store::streaming>, g, 512));
    vs.push_back(make<T>("resident 512x2 ldg plain", resident<T, 512, 2, Load::ldg, Store::plain>, g, 512));
    vs.push_back(make<T>("resident 512x2 evict_first plain", resident<T, 512, 2, Load::evict_first, Store::plain>, g, 512));
    vs.push_back(make<T>("resident 256x4 ldg stcs", resident<T, 256, 4, Load::ldg, Store::streaming>, g, 256));
    vs.push_back(make<T>("resident 1024x1 ldg stcs", resident<T, 1024, 1, Load::ldg, Store::streaming>, g, 1024));
  } else if (nvec == 2048) {
    vs.push_back(make<T>("resident 512x4 ldg stcs", resident<T, 512, 4, Load::ldg, Store::streaming>, g, 512));
    vs.push_back(make<T>("resident 512x4 ldg plain", resident<T, 512, 4, Load::ldg, Store::plain>, g, 512));
    vs.push_back(make<T>("resident 512x4 evict_first plain", resident<T, 512, 4, Load::evict_first, Store::plain>, g, 512));
    vs.push_back(make<T>("resident 1024x2 ldg stcs", resident<T, 1024, 2, Load::ldg, Store::streaming>, g, 1024));
  } else if (nvec == 512) {
    vs.push_back(make<T>("resident 256x2 ldg stcs", resident<T, 256, 2, Load::ldg, Store::streaming>, g, 256));
    vs.push_back(make<T>("resident 256x2 ldg plain", resident<T, 256, 2, Load::ldg, Store::plain>, g, 256));
    vs.push_back(make<T>("resident 256x2 evict_first plain", resident<T, 256, 2, Load::evict_first, Store::plain>, g, 256));
    vs.push_back(make<T>("resident 512x1 ldg stcs", resident<T, 512, 1, Load::ldg, Store::streaming>, g, 512));
    vs.push_back(make<T>("resident 128x4 ldg stcs", resident<T, 128, 4, Load::ldg, Store::streaming>, g, 128));
  }
  if (nvec == 1024) {
    vs.push_back(make_persistent<T>("persistent 512x2", persistent<T, 512, 2, false>, 512));
    vs.push_back(make_persistent<T>("persistent 512x2 prefetch", persistent<T, 512, 2, true>, 512));
    vs.push_back(make_persistent<T>("persistent 256x4 prefetch", persistent<T, 256, 4, true>, 256));
  } else if (nvec == 2048) {
    vs.push_back(make_persistent<T>("persistent 512x4", persistent<T, 512, 4, false>, 512));
    vs.push_back(make_persistent<T>("persistent 512x4 prefetch", persistent<T, 512, 4, true>, 512));
  } else if (nvec == 512) {
    vs.push_back(make_persistent<T>("persistent 256x2", persistent<T, 256, 2, false>, 256));
    vs.push_back(make_persistent<T>("persistent 256x2 prefetch", persistent<T, 256, 2, true>, 256));
    vs.push_back(make_persistent<T>("persistent 128x4 prefetch", persistent<T, 128, 4, true>, 128));
  }
  vs.push_back(make<T>("looped 512 last/first plain", looped<T, 512, Load::evict_last, Load::evict_first, Store::plain>, g, 512));
  vs.push_back(make<T>("looped 512 last/first stcs", looped<T, 512, Load::evict_last, Load::evict_first, Store::streaming>, g, 512));
  vs.push_back(make<T>("looped 512 ldg/ldg plain", looped<T, 512, Load::ldg, Load::ldg, Store::plain>, g, 512));
  vs.push_back(make<T>("looped 256 last/first plain", looped<T, 256, Load::evict_last, Load::evict_first, Store::plain>, g, 256));
  vs.push_back(make<T>("looped 1024 last/first plain", looped<T, 1024, Load::evict_last, Load::evict_first, Store::plain>, g, 1024));
  // stream21 takes the whole tensor as one count (its last argument below).
  vs.push_back(make<T>("stream21 a+b stcs", stream21<T, Store::streaming>, dim3(132 * 8), 256, false));
  vs.push_back(make<T>("stream21 a+b plain", stream21<T, Store::plain>, dim3(132 * 8), 256, false));

  // Results first: each variant's dx on set 0 against the first's.
  std::vector<T> ref(host.size()), out(host.size());
  const int launches = 20, rounds = 7;
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<std::vector<float>> samples(vs.size());
  std::vector<double> maxdiff(vs.size(), 0.0);
  for (size_t i = 0; i < vs.size(); ++i) {
    const int w = vs[i].name.rfind("stream21", 0) == 0 ? rows * width : width;
    vs[i].kernel<<<vs[i].grid, vs[i].block>>>(y[0], dy[0], dx[0], w, rows);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(i == 0 ? ref.data() : out.data(), dx[0], bytes, cudaMemcpyDeviceToHost));
    if (i > 0 && vs[i].same_result)
      for (size_t j = 0; j < out.size(); ++j)
        maxdiff[i] = std::max(maxdiff[i], std::fabs(static_cast<double>(static_cast<float>(out[j])) -
                                                    static_cast<double>(static_cast<float>(ref[j]))));
  }
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < vs.size(); ++i) {
      const int w = vs[i].name.rfind("stream21", 0) == 0 ? rows * width : width;
      CHECK(cudaEventRecord(e0));
      for (int l = 0; l < launches; ++l) {
        const int s = l % sets;
        vs[i].kernel<<<vs[i].grid, vs[i].block>>>(y[s], dy[s], dx[s], w, rows);
      }
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      CHECK(cudaGetLastError());
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      samples[i].push_back(ms * 1000.0f / launches);
    }
  for (size_t i = 0; i < vs.size(); ++i) {
    auto v = samples[i];
    std::sort(v.begin(), v.end());
    const float med = v[v.size() / 2];
    std::printf("| %s | %dx%d | %-34s | %8.2f us | %6.0f GB/s | spread %.2f%% | max|d| %.2e |\n", dtype, rows, width,
                vs[i].name.c_str(), med, 3.0 * bytes / (med * 1e3), 100.0 * (v.back() - v.front()) / med, maxdiff[i]);
  }
  for (int s = 0; s < sets; ++s) {
    CHECK(cudaFree(y[s]));
    CHECK(cudaFree(dy[s]));
    CHECK(cudaFree(dx[s]));
  }
}

int main() {
  std::printf("| dtype | shape | variant | median per launch | GB/s (3 x bytes) | spread | vs first |\n|---|---|---|---|---|---|---|\n");
  run<float>(4096, 4096, "float32");
  run<__half>(4096, 4096, "float16");
  run<float>(8192, 8192, "float32");
  run<__half>(8192, 8192, "float16");
  return 0;
}
