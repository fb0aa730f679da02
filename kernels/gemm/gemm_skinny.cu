// The skinny GEMM: C = A.B for M of 1 to kSkinnyMaxM rows (decoding: a token or a few against a
// weight matrix). There reading B is the whole cost (a 4096 x 14336 16-bit B is 117 MB, some
// 30 us at the copy's rate, against 2 M N K flops that CUDA cores do in a fraction of that), and
// the tile kernels, made for reuse of B across M, leave most of the multiprocessors idle or cut K
// into few ranges. Here B is streamed as a copy is:
// - a block takes 32 x kVec columns (one 16-byte vector of a B row a lane: a warp reads 512
//   contiguous bytes of a row) and a range of K; its 8 warps take the range's rows in turn,
//   kUnroll rows' loads in flight a lane before their FMAs;
// - each lane keeps M x kVec float32 sums; A's element for (m, k) is the same for every lane of
//   a warp (a broadcast load, from L1 after the first warp);
// - the warps' sums are added in warp order through shared memory; with one K range the block
//   writes C, else its float32 partial row, and the last block of a column tile to finish
//   (a counter per tile, reset by that block for the next launch) adds the ranges' partials in
//   range order: the same bits every run, no float atomics.
// Operands whose rows are not whole 16-byte vectors on 16-byte boundaries, and K = 0, go to the
// SIMT kernel (skinny_path says which).
#include <cuda_runtime.h>

#include <algorithm>

#include "core/errors.hpp"
#include "device/device_limits.hpp"
#include "kernels/common/dispatch.cuh"
#include "kernels/gemm/gemm_contract.hpp"
#include "kernels/gemm/gemm_kernels.hpp"

namespace kbench::gemm {

namespace {

constexpr int kWarps = 8, kThreads = kWarps * 32;
constexpr int kUnroll = 4;          // B rows in flight a lane
constexpr int kMinRowsPerWarp = 8;  // a K range gives each warp at least this many rows
constexpr int kBlocksPerSm = 4;     // K ranges enough for this many blocks a multiprocessor

template <class T>
constexpr int kVec = 16 / static_cast<int>(sizeof(T));

template <class T>
constexpr int tile_cols() {
  return 32 * kVec<T>;
}

struct SkinnyScratch {
  unsigned* done;  // one counter per column tile
  float* partial;  // [range][m][n]
};

// Columns n0 .. n0 + kVec - 1 of B's row k as floats: one 16-byte load, or element by element
// (zeros past N) for the vector that crosses N.
template <class T>
__device__ __forceinline__ void load_b(const T* row, int n0, int n, float (&out)[kVec<T>]) {
  if (n0 + kVec<T> <= n) {
    const uint4 u = __ldcs(reinterpret_cast<const uint4*>(row + n0));  // read once: stream past L2
    const T* e = reinterpret_cast<const T*>(&u);
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) out[j] = to_float(e[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) out[j] = n0 + j < n ? to_float(row[n0 + j]) : 0.0f;
  }
}

template <class T, int MP>
__global__ void __launch_bounds__(kThreads) skinny_gemm_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                                              T* __restrict__ c, int m, int n, int k,
                                                              std::int64_t lda, std::int64_t ldb, int range_rows,
                                                              SkinnyScratch s) {
  __shared__ float sums[kWarps][tile_cols<T>()];
  __shared__ bool last;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int tile = blockIdx.x, range = blockIdx.y, ranges = gridDim.y;
  const int n0 = tile * tile_cols<T>() + lane * kVec<T>;
  const int k_begin = range * range_rows, k_end = min(k, k_begin + range_rows);
  float acc[MP][kVec<T>] = {};
  if (n0 < n) {
    for (int k0 = k_begin + warp; k0 < k_end; k0 += kWarps * kUnroll) {
      float bv[kUnroll][kVec<T>];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int kk = k0 + u * kWarps;
        if (kk < k_end) load_b(b + kk * ldb, n0, n, bv[u]);
        else
#pragma unroll
          for (int j = 0; j < kVec<T>; ++j) bv[u][j] = 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int kk = k0 + u * kWarps;
        if (kk >= k_end) break;
#pragma unroll
        for (int r = 0; r < MP; ++r) {
          if (r >= m) break;
          const float av = to_float(a[r * lda + kk]);
#pragma unroll
          for (int j = 0; j < kVec<T>; ++j) acc[r][j] = fmaf(av, bv[u][j], acc[r][j]);
        }
      }
    }
  }
  // The warps' sums, added in warp order, one row of C at a time; thread t owns column t of the
  // tile (a float32 tile has 128 columns: half the threads own none). The loop over rows is
  // unrolled so that acc stays in registers.
  const bool owner = static_cast<int>(threadIdx.x) < tile_cols<T>();
  const int col = tile * tile_cols<T>() + static_cast<int>(threadIdx.x);
#pragma unroll
  for (int r = 0; r < MP; ++r) {
    if (r >= m) break;
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) sums[warp][lane * kVec<T> + j] = acc[r][j];
    __syncthreads();
    float total = 0.0f;
    if (owner)
#pragma unroll
      for (int w = 0; w < kWarps; ++w) total += sums[w][threadIdx.x];
    if (owner && col < n) {
      if (ranges == 1) c[static_cast<std::int64_t>(r) * n + col] = from_float<T>(total);
      else s.partial[(static_cast<std::int64_t>(range) * m + r) * n + col] = total;
    }
    __syncthreads();  // sums is read before the next row overwrites it
  }
  if (ranges == 1) return;
  if (threadIdx.x == 0) {
    __threadfence();  // the partial row is visible GPU-wide before the count says so
    last = atomicAdd(&s.done[tile], 1u) == static_cast<unsigned>(ranges - 1);
  }
  __syncthreads();
  if (!last) return;
  __threadfence();  // every other range's partial is visible (each fenced before counting)
  if (owner && col < n)
    for (int r = 0; r < m; ++r) {
      const float* p = s.partial + static_cast<std::int64_t>(r) * n + col;
      const std::int64_t step = static_cast<std::int64_t>(m) * n;
      float total = 0.0f;
      int g = 0;
      for (; g + 8 <= ranges; g += 8) {  // eight loads in flight, added in range order
        float v[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) v[u] = __ldcg(p + (g + u) * step);
#pragma unroll
        for (int u = 0; u < 8; ++u) total += v[u];
      }
      for (; g < ranges; ++g) total += __ldcg(p + g * step);
      c[static_cast<std::int64_t>(r) * n + col] = from_float<T>(total);
    }
  if (threadIdx.x == 0) s.done[tile] = 0;  // ready for the next launch
}

int column_tiles(std::int64_t n, DType t) {
  const std::int64_t cols = 32 * 16 / static_cast<std::int64_t>(dtype_size(t));
  return static_cast<int>((n + cols - 1) / cols);
}

// K ranges: enough blocks for kBlocksPerSm a multiprocessor, each range at least
// kMinRowsPerWarp rows a warp.
int k_ranges(std::int64_t n, std::int64_t k, DType t) {
  const std::int64_t tiles = column_tiles(n, t);
  const std::int64_t want = (std::int64_t{kBlocksPerSm} * current_device_limits().sms + tiles - 1) / tiles;
  const std::int64_t most = std::max<std::int64_t>(1, k / (kWarps * kMinRowsPerWarp));
  return static_cast<int>(std::clamp<std::int64_t>(want, 1, std::min<std::int64_t>(most, 65535)));
}

std::size_t counters_bytes(std::int64_t n, DType t) {
  return (static_cast<std::size_t>(column_tiles(n, t)) * sizeof(unsigned) + 15) / 16 * 16;
}

}  // namespace

std::string skinny_path(const DeviceTensor& a, const DeviceTensor& b, std::int64_t k) {
  return k > 0 && rows_aligned16(b) ? "skinny" : "simt";
}

std::size_t skinny_workspace_bytes(std::int64_t m, std::int64_t n, std::int64_t k, DType t) {
  if (m < 1 || m > kSkinnyMaxM || n < 1 || k < 1) return 0;
  const int ranges = k_ranges(n, k, t);
  if (ranges == 1) return 0;
  return counters_bytes(n, t) + static_cast<std::size_t>(ranges) * m * n * sizeof(float);
}

void launch_skinny(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, cudaStream_t stream,
                   void* workspace, std::size_t workspace_bytes) {
  check_gemm(a, b, c);
  const std::int64_t m = c.rows, n = c.cols, k = a.cols;
  if (m > kSkinnyMaxM)
    throw std::invalid_argument("gemm skinny: M = " + std::to_string(m) + " is above " + std::to_string(kSkinnyMaxM));
  if (skinny_path(a, b, k) != "skinny") return launch_simt(a, b, c, stream);
  const int ranges = k_ranges(n, k, a.dtype);
  const std::size_t need = skinny_workspace_bytes(m, n, k, a.dtype);
  if (ranges > 1 && (workspace == nullptr || workspace_bytes < need))
    throw std::invalid_argument("gemm skinny: a workspace of " + std::to_string(need) + " bytes is needed");
  SkinnyScratch s{};
  if (ranges > 1) {
    s.done = static_cast<unsigned*>(workspace);
    s.partial = reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + counters_bytes(n, a.dtype));
  }
  const int range_rows = static_cast<int>((k + ranges - 1) / ranges);
  const dim3 grid(static_cast<unsigned>(column_tiles(n, a.dtype)), static_cast<unsigned>(ranges));
  dispatch_dtype(a.dtype, [&]<class T>() {
    const auto run = [&]<int MP>() {
      skinny_gemm_kernel<T, MP><<<grid, kThreads, 0, stream>>>(a.as<const T>(), b.as<const T>(), c.as<T>(),
                                                               static_cast<int>(m), static_cast<int>(n),
                                                               static_cast<int>(k), a.row_stride, b.row_stride,
                                                               range_rows, s);
    };
    if (m == 1) run.template operator()<1>();
    else if (m <= 2) run.template operator()<2>();
    else if (m <= 4) run.template operator()<4>();
    else run.template operator()<8>();
  });
  KB_CUDA(cudaGetLastError());
}

}  // namespace kbench::gemm
