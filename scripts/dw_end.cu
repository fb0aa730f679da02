// What the end of rmsnorm_backward's dw costs in wall time, and why (issue 14). Session 17's
// stall sampling put the resident dw kernel's row loop level with the frozen kernel's and 21-28%
// of its samples after the loop, waiting at the cluster barriers (or, with the values pushed, at
// an mbarrier) for the cluster's slowest block; yet a block that waits there holds nothing any
// other block needs, so waiting alone should not lengthen the kernel. This probe times the same
// row loop (float16 4096x4096, no dh: h and dy read, dx written, a block per row, 128 threads of
// 4 16-byte vectors, dw in registers; w is taken as 1: read from L1 it is no DRAM traffic, and
// here its loads, hoisted by the compiler, spilled at kbench's register bounds) with five ends, and stamps %globaltimer at each
// block's start, loop end and exit, so that the spread of the blocks' finishing times within a
// cluster and across the grid, and how long the end takes after the last loop, are measured:
//   frozen          no dw, the grid the occupancy gives (kbench's frozen kernel)
//   frozen_c8       no dw, the dw kernels' grid in clusters of 8 (session 16: 0.3-2 us dearer)
//   fold_c8         dw, the end kbench runs: the registers into a shared-memory row, a cluster
//                   barrier, rank q sums slice q of the 8 rows through distributed shared memory
//                   and writes the cluster's partial row, a second barrier
//   direct_c8       dw, each block writes its registers as its own partial row, no barrier (in
//                   clusters: the launch alone)
//   direct          the same unclustered, on the same grid
// Prediction (session 17, before any run): if waiting for the cluster's slowest block costs wall
// time, fold_c8 is several us slower than direct_c8 with an `end p50` of several us; if not, the
// two are level and dw's remaining cost (kbench: 8-9 us without dh at this shape) lies in the
// finalize and the grid rather than the fold. frozen_c8 against frozen is the grid's share.
// Not a kbench experiment: a probe for the next change, run by scripts/gpu_session.sh
// (MICROBENCH=dw_end). Each launch reads its own input set (three sets, 300 MB: cold); a sample
// is 20 launches between two events, variants take turns, 7 rounds, the table gives each
// variant's median per launch (the finalize kernel that would sum the partial rows is not run:
// its cost is the other half of the question, and the partial rows differ, 62 or 496). Every
// variant's dx is compared with the first's, and the dw variants' column sums of their partial
// rows with each other's (max |difference|), so that a fast wrong kernel shows.
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "probe_check.cuh"

namespace cg = cooperative_groups;

constexpr int kRows = 4096, kWidth = 4096, kThreads = 128, kVecs = 4, kCluster = 8, kSets = 3;
enum class End { none, fold, direct };

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Element j of 8 halves packed in u, as a float.
__device__ __forceinline__ float elem(const uint4& u, int j) {
  const unsigned word = (&u.x)[j / 2];
  return __half2float(__ushort_as_half(static_cast<unsigned short>(j & 1 ? word >> 16 : word & 0xffffu)));
}

__device__ __forceinline__ float2 block_sum(float2 v, float2* scratch) {
  for (int o = 16; o > 0; o >>= 1) {
    v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
    v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
  }
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float2 s = scratch[0];
  for (int i = 1; i < kThreads / 32; ++i) s.x += scratch[i].x, s.y += scratch[i].y;
  __syncthreads();  // scratch is free for the next row
  return s;
}

// stamps: [block][3] = start, loop end, exit (ns); partial: a row of kWidth floats per partial.
template <bool Dw, End E>
__global__ void __launch_bounds__(kThreads, Dw ? 4 : 6)  // kbench's: 4 blocks an SM with dw, 6 without
    rows_kernel(const __half* h, const __half* dy, __half* dx, float eps, float* partial,
                unsigned long long* stamps) {
  extern __shared__ float4 slot[];  // fold: the block's dw row, kWidth floats
  __shared__ float2 scratch[kThreads / 32];
  if (threadIdx.x == 0) stamps[3 * blockIdx.x] = global_ns();  // straight out: no register held across the loop
  float acc[kVecs][8] = {};
  const int lane = threadIdx.x;
  for (int row = blockIdx.x; row < kRows; row += gridDim.x) {
    const int at = row * (kWidth / 8) + lane;  // the row's first vector of this thread, in 16-byte vectors
    uint4 hv[kVecs], dyv[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
      hv[k] = __ldg(reinterpret_cast<const uint4*>(h) + at + k * kThreads),
      dyv[k] = __ldg(reinterpret_cast<const uint4*>(dy) + at + k * kThreads);
    float2 s = make_float2(0.f, 0.f);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float x = elem(hv[k], j);
        s.x = fmaf(x, x, s.x);
        s.y = fmaf(elem(dyv[k], j), x, s.y);
      }
    }
    s = block_sum(s, scratch);
    // As kbench's kernel does (keep_packed, row_device.cuh): only the packed vectors live across
    // the reduction, not the floats converted before it (which cost registers and occupancy).
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      asm volatile("" : "+r"(hv[k].x), "+r"(hv[k].y), "+r"(hv[k].z), "+r"(hv[k].w));
      asm volatile("" : "+r"(dyv[k].x), "+r"(dyv[k].y), "+r"(dyv[k].z), "+r"(dyv[k].w));
    }
    const float rstd = rsqrtf(s.x / kWidth + eps), coef = rstd * rstd * rstd * s.y / kWidth;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      uint4 o;
#pragma unroll
      for (int j = 0; j < 8; j += 2) {
        float out[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float x = elem(hv[k], j + e), d = elem(dyv[k], j + e);
          out[e] = rstd * d - x * coef;
          if constexpr (Dw) acc[k][j + e] = fmaf(d * x, rstd, acc[k][j + e]);
        }
        const __half2 pair = __floats2half2_rn(out[0], out[1]);
        (&o.x)[j / 2] = *reinterpret_cast<const unsigned*>(&pair);
      }
      __stcs(reinterpret_cast<uint4*>(dx) + at + k * kThreads, o);
    }
  }
  if (threadIdx.x == 0) stamps[3 * blockIdx.x + 1] = global_ns();
  if constexpr (Dw && E == End::direct) {
    float4* out = reinterpret_cast<float4*>(partial + static_cast<size_t>(blockIdx.x) * kWidth);
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
      for (int q = 0; q < 2; ++q)
        out[2 * (lane + k * kThreads) + q] = make_float4(acc[k][4 * q], acc[k][4 * q + 1], acc[k][4 * q + 2], acc[k][4 * q + 3]);
  }
  if constexpr (Dw && E == End::fold) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
      for (int q = 0; q < 2; ++q)
        slot[2 * (lane + k * kThreads) + q] = make_float4(acc[k][4 * q], acc[k][4 * q + 1], acc[k][4 * q + 2], acc[k][4 * q + 3]);
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    const int slice = kWidth / kCluster, begin = static_cast<int>(cluster.block_rank()) * slice;
    float* out = partial + static_cast<size_t>(blockIdx.x / kCluster) * kWidth;
    for (int c = begin + lane; c < begin + slice; c += kThreads) {
      float v[kCluster];
#pragma unroll
      for (int r = 0; r < kCluster; ++r) v[r] = reinterpret_cast<float*>(cluster.map_shared_rank(slot, r))[c];
      float sum = v[0];
#pragma unroll
      for (int r = 1; r < kCluster; ++r) sum += v[r];
      out[c] = sum;
    }
    cluster.sync();
  }
  if (threadIdx.x == 0) stamps[3 * blockIdx.x + 2] = global_ns();
}

struct Variant {
  std::string name;
  void (*kernel)(const __half*, const __half*, __half*, float, float*, unsigned long long*);
  bool dw;
  unsigned cluster, blocks;
  size_t shared;
  std::vector<float> times;
};

// A launch of v on `blocks` blocks, in clusters of v.cluster where it has them; `attr` holds the
// cluster attribute the configuration points at.
cudaLaunchConfig_t launch_config(const Variant& v, unsigned blocks, cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = v.shared;
  attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = v.cluster;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  config.attrs = &attr;
  config.numAttrs = v.cluster > 1 ? 1 : 0;
  return config;
}

void launch(const Variant& v, const __half* h, const __half* dy, __half* dx, float* partial,
            unsigned long long* stamps) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config = launch_config(v, v.blocks, attr);
  CHECK(cudaLaunchKernelEx(&config, v.kernel, h, dy, dx, 1e-6f, partial, stamps));
}

// Blocks of `kernel` resident at once: whole clusters where clustered.
unsigned resident_blocks(Variant& v, int sms) {
  if (v.cluster == 1) {
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, kThreads, v.shared));
    return static_cast<unsigned>(per_sm * sms);
  }
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config = launch_config(v, kCluster * 1024, attr);
  int clusters = 0;
  CHECK(cudaOccupancyMaxActiveClusters(&clusters, v.kernel, &config));
  return static_cast<unsigned>(clusters) * v.cluster;
}

double percentile(std::vector<double> x, double p) {
  std::sort(x.begin(), x.end());
  return x[static_cast<size_t>(p * (x.size() - 1))];
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t n = static_cast<size_t>(kRows) * kWidth;
  __half *h, *dy, *dx;
  float* partial;
  unsigned long long* stamps;
  CHECK(cudaMalloc(&h, kSets * n * 2));
  CHECK(cudaMalloc(&dy, kSets * n * 2));
  CHECK(cudaMalloc(&dx, kSets * n * 2));
  CHECK(cudaMalloc(&partial, static_cast<size_t>(4096) * kWidth * 4));
  CHECK(cudaMalloc(&stamps, 3 * 4096 * 8));
  {  // inputs: a fixed pseudo-random pattern in [-1, 1)
    std::vector<__half> host(kSets * n);
    unsigned s = 12345;
    for (auto& x : host) s = s * 1664525u + 1013904223u, x = __float2half(static_cast<float>(s >> 8) / (1 << 23) - 1.0f);
    CHECK(cudaMemcpy(h, host.data(), kSets * n * 2, cudaMemcpyHostToDevice));
    for (auto& x : host) s = s * 1664525u + 1013904223u, x = __float2half(static_cast<float>(s >> 8) / (1 << 23) - 1.0f);
    CHECK(cudaMemcpy(dy, host.data(), kSets * n * 2, cudaMemcpyHostToDevice));
  }
  const size_t row_bytes = kWidth * sizeof(float);
  std::vector<Variant> vs{{"frozen", rows_kernel<false, End::none>, false, 1, 0, 0, {}},
                          {"frozen_c8", rows_kernel<false, End::none>, false, kCluster, 0, 0, {}},
                          {"fold_c8", rows_kernel<true, End::fold>, true, kCluster, 0, row_bytes, {}},
                          {"direct_c8", rows_kernel<true, End::direct>, true, kCluster, 0, 0, {}},
                          {"direct", rows_kernel<true, End::direct>, true, 1, 0, 0, {}}};
  for (auto& v : vs) {
    if (v.shared) CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, v.shared));
    v.blocks = resident_blocks(v, sms);
  }
  // The dw kernels' grid for all but `frozen`: the fold's (the fewest resident blocks of the dw ways).
  for (size_t i = 1; i < vs.size(); ++i) vs[i].blocks = vs[2].blocks;

  // Checks: dx against the first variant's; dw's column sums of the partial rows, fold against direct.
  std::vector<__half> ref(n), got(n);
  std::vector<double> dw_ref;
  for (size_t i = 0; i < vs.size(); ++i) {
    CHECK(cudaMemset(partial, 0, static_cast<size_t>(4096) * row_bytes));
    launch(vs[i], h, dy, dx, partial, stamps);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(i == 0 ? ref.data() : got.data(), dx, n * 2, cudaMemcpyDeviceToHost));
    double err = 0;
    if (i > 0)
      for (size_t e = 0; e < n; ++e) err = std::max(err, std::fabs(double(__half2float(ref[e])) - __half2float(got[e])));
    double dw_err = 0;
    if (vs[i].dw) {
      const unsigned rows = vs[i].name == "fold_c8" ? vs[i].blocks / kCluster : vs[i].blocks;
      std::vector<float> p(static_cast<size_t>(rows) * kWidth);
      CHECK(cudaMemcpy(p.data(), partial, p.size() * 4, cudaMemcpyDeviceToHost));
      std::vector<double> col(kWidth, 0.0);
      for (unsigned r = 0; r < rows; ++r)
        for (int c = 0; c < kWidth; ++c) col[c] += p[static_cast<size_t>(r) * kWidth + c];
      if (dw_ref.empty()) dw_ref = col;
      for (int c = 0; c < kWidth; ++c) dw_err = std::max(dw_err, std::fabs(col[c] - dw_ref[c]));
    }
    std::printf("check %-10s %4u blocks, clusters of %u: dx max|diff| %.3g, dw column sums max|diff| %.3g\n",
                vs[i].name.c_str(), vs[i].blocks, vs[i].cluster, err, dw_err);
  }

  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  constexpr int kLaunches = 20, kRounds = 7;
  for (int round = 0; round < kRounds; ++round)
    for (auto& v : vs) {
      CHECK(cudaEventRecord(a));
      for (int l = 0; l < kLaunches; ++l) {
        const size_t set = static_cast<size_t>(l % kSets) * n;
        launch(v, h + set, dy + set, dx + set, partial, stamps);
      }
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      v.times.push_back(ms * 1000 / kLaunches);
    }

  // One more cold launch of each, alone, for its stamps (ns from the grid's first start).
  std::printf("\n%-10s %6s %8s | %8s %8s %8s %8s | %9s %9s | %8s %8s\n", "variant", "blocks", "us", "start",
              "loop p50", "loop p90", "loop max", "clus.sprd", "clus.max", "end p50", "exit max");
  for (auto& v : vs) {
    CHECK(cudaMemset(stamps, 0, 3 * 4096 * 8));
    launch(v, h, dy, dx, partial, stamps);
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned long long> st(3 * v.blocks);
    CHECK(cudaMemcpy(st.data(), stamps, st.size() * 8, cudaMemcpyDeviceToHost));
    unsigned long long first = st[0];
    for (unsigned i = 0; i < v.blocks; ++i) first = std::min(first, st[3 * i]);
    std::vector<double> start, loop, end, exit, spread;
    for (unsigned i = 0; i < v.blocks; ++i) {
      start.push_back((st[3 * i] - first) / 1e3);
      loop.push_back((st[3 * i + 1] - first) / 1e3);
      end.push_back((st[3 * i + 2] - st[3 * i + 1]) / 1e3);
      exit.push_back((st[3 * i + 2] - first) / 1e3);
    }
    for (unsigned c = 0; c + kCluster <= v.blocks; c += kCluster) {  // the loop ends' spread within 8 consecutive blocks
      const auto [lo, hi] = std::minmax_element(loop.begin() + c, loop.begin() + c + kCluster);
      spread.push_back(*hi - *lo);
    }
    std::sort(v.times.begin(), v.times.end());
    std::printf("%-10s %6u %8.2f | %8.2f %8.2f %8.2f %8.2f | %9.2f %9.2f | %8.2f %8.2f\n", v.name.c_str(), v.blocks,
                v.times[v.times.size() / 2], percentile(start, 1.0), percentile(loop, 0.5), percentile(loop, 0.9),
                percentile(loop, 1.0), percentile(spread, 0.5), percentile(spread, 1.0), percentile(end, 0.5),
                percentile(exit, 1.0));
  }
  std::printf("\nus: median per launch (20 launches a sample, cold); the rest in us from the grid's first start,"
              " one cold launch: the last block's start, the blocks' loop ends (median, 90th percentile, last),"
              " the loop ends' spread within 8 consecutive blocks (a cluster; median, largest), the end's"
              " length (exit - loop end, median) and the last exit\n");
  return 0;
}
