// The Hopper GEMM kernel template (sm_90a): C [M, N] = A [M, K] . B [K, N] for float16 and
// bfloat16, float32 accumulators, C rounded once to the dtype; and for float32 through tf32
// products (T = float: wgmma reads the float32 elements as tf32, ignoring their low 13 bits),
// C the float32 accumulators. gemm_wgmma.cu instantiates it and builds its tensor maps;
// gemm_mma.cuh is the sm_80 kernel it stands beside.
//
// A block of three warpgroups owns a 128 x BN tile at a time and walks K in steps of 128 bytes
// (64 16-bit elements, 32 float32 ones):
//   - warpgroup 0, the producer, hands most of its registers back (setmaxnreg) and one of its
//     threads issues TMA loads of A's [128, BK] and B's [BK, BN] tiles into a ring of STAGES
//     shared-memory stages, each stage's arrival counted in bytes on its `full` mbarrier;
//   - warpgroups 1 and 2, the consumers, take the registers and each computes 64 rows of the
//     tile with wgmma m64nBNk16 (m64nBNk8 for tf32; four per stage) straight from shared memory, accumulating in
//     float32 registers. Each consumer keeps one stage's wgmmas in flight while it issues the
//     next and frees a stage on its `empty` mbarrier once the wgmmas that read it are done;
//   - the grid is persistent (one block per multiprocessor, tiles in grouped order, strided by
//     the grid), so the producer loads the next tile's stages while the consumers store the last.
//   - split-K, for shapes of too few tiles to fill the multiprocessors (a decode step's M of 1 to
//     128): each tile's K is cut into `splits` ranges, each a unit of work whose float32 partial
//     tile goes to its own slice of `partials` ([splits][M][N]); wgmma_reduce_kernel then sums
//     the slices in order, so the result is the same bits every run (no atomics). Given
//     `partials`, every unit writes there and C is not touched (except by the swapped product's
//     last unit of a tile, below).
//   - the swapped product (launch_wgmma_swap, decode shapes): C^T [N, M] = B^T . A^T on the same
//     template, B as the M-major A' and A as the K-major B', so that N fills wgmma's 64-row M
//     slots and a small M is wgmma's N; with one split the kernel stores its tile of C^T into C
//     transposed, from registers (kTransposedC). With several, each unit writes its float32
//     partial tile to its slice and counts itself done on the tile's counter (`counters`, one
//     unsigned a tile, zero between launches); the unit that counts last reads the tile's
//     slices back in split order, sums them in float32 in that order (the same bits every run,
//     whichever unit is last: no float atomics), stores the sum transposed into C and resets the
//     counter, as row_sum's split plan (kernels/rows/row_sum.cu) does with its rows. (A second
//     kernel summed them before: its launch and its read of the partials were 2-5 us of the
//     14-40 us of a decode step's product in ncu, session 19.)
// The epilogue either writes each consumer's 64 x BN of C into shared memory (the same swizzle,
// 64-column boxes) and has one thread hand them to TMA stores, going on to the next tile while
// the copy engine writes them (the consumer waits for those reads only before it writes the
// buffer again), or (`direct` configurations, and C rows that are not whole 16-byte chunks)
// stores the accumulators straight from registers, bounds-checked (transposed, for the swap).
//
// Shared memory takes the 128-byte swizzle that TMA writes and wgmma reads: an operand whose
// contiguous dimension is K (K-major: A as given, B^T) is a [rows][BK] box of 128-byte rows; one
// whose contiguous dimension is M or N (B as given, A^T; 16-bit only: wgmma transposes no tf32
// operand, so the float32 launcher hands it B^T) is a set of [64 k][64] boxes, one per 64
// columns of M or N. Either way 64 rows or columns are 8 KiB, and the descriptors say how to walk
// them (desc_k_major, desc_mn_major). TMA zero-fills what lies outside the tensor, so ragged M, N
// and K need no masking in the mainloop; only the stores are checked.
//
// Needs every row of A and B on a 16-byte boundary, as TMA's strides must be: the launcher sends
// other operands elsewhere. The Fault parameter is for the negative controls of the tests.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/launch_ex.cuh"
#include "kernels/gemm/gemm_mma.cuh"
#include "kernels/gemm/gemm_tile.cuh"
#include "kernels/gemm/hopper_ptx.cuh"
#include "kernels/gemm/wgmma_ops.cuh"

namespace kbench::gemm {

// kAMajorM: A lies in memory as A^T ([K, M] rows); kBMajorN: B as given ([K, N] rows, N
// contiguous). The forward is <false, true>; the backward's products take the other layouts.
// The kernel takes the configuration's fields (nvcc's launch stubs cannot spell a class-type
// template argument); kTmaStore is !WgmmaConfig::direct.
template <class T, int BN, int STAGES, bool kTmaStore, int CLUSTER, bool kAMajorM, bool kBMajorN,
          Fault F = Fault::none, int KSPLIT = 1>
struct WgmmaGemm {
  static constexpr int kElement = sizeof(T);
  static constexpr int kBM = 128, kBK = 128 / kElement, kConsumers = 2;  // a 128-byte row of K
  static constexpr int kKSteps = 4;  // wgmmas per stage: each takes 32 bytes of K (k16, or k8 in tf32)
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kPanelBytes = 64 * 128;  // 64 rows or columns of one stage: 8 KiB
  static constexpr int kAStageBytes = kBM * kBK * kElement, kBStageBytes = BN * kBK * kElement;
  static constexpr int kStageBytes = kAStageBytes + kBStageBytes;
  // C through shared memory: boxes of 64 rows by one 128-byte row of columns, 16-byte chunks.
  static constexpr int kCBoxCols = 128 / kElement, kCChunk = 16 / kElement;
  static constexpr int kCBytes = kTmaStore ? 64 * BN * kElement : 0;  // a consumer's share of C
  // The stages from a 1024-byte boundary (the swizzle's period), C, then 2 mbarriers a stage.
  static constexpr int kSmemBytes = 1024 + STAGES * kStageBytes + kConsumers * kCBytes + 2 * STAGES * 8;
  static constexpr int kAccumulators = BN / 2;  // a consumer thread's share of 64 x BN
  // Named barriers: 1 + i among consumer warpgroup i's threads (the TMA-store epilogue), this
  // one among both consumers' (the swapped product's split count); 0 is __syncthreads'.
  static constexpr int kConsumersBarrier = 1 + kConsumers;
  // The swapped product's split sum: slices loaded together, kSumGroup x BN / 2 floats a thread
  // (at BN = 64, 128 loads in flight and no spill within the 168 registers of the launch bound:
  // ptxas 13.0).
  static constexpr int kSumGroup = 4;
  // Registers a thread, producer and consumers: 128 x 40 + 256 x 232 fits the 64K of an SM.
  static constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
  static_assert(kElement == 2 || (kElement == 4 && !kAMajorM && !kBMajorN && CLUSTER == 1),
                "tf32 operands are K-major only (wgmma transposes 16-bit ones alone)");
  // An N-major B is loaded and C stored in panels 64 wide; a K-major B is a box of BN rows, whole
  // 8-row groups of the swizzle (the swapped product's narrow tiles of M take 16).
  static_assert((kBMajorN || kTmaStore ? BN % 64 == 0 : BN % 16 == 0) && BN <= 256,
                "B's N-major panels and C's boxes are 64 wide, K-major rows come in 16s; wgmma's N is at most 256");
  static_assert(kSmemBytes <= 227 * 1024, "more shared memory than a block can have");
  static_assert(CLUSTER == 1 || (CLUSTER == 2 && kBMajorN && (BN / 64) % 2 == 0),
                "pairs multicast B's N-major panels, half each");
  // KSPLIT > 1: the cluster's split-K sum (see the kernel). Each block's float32 tile goes into
  // its own stage ring once the mainloop is done with it, rows kSplitPitch floats apart: 32 bytes
  // beyond BN, so that the 4 rows a half-warp's float2 stores touch fall in 4 different 32-byte
  // bank groups (without the pad all 8 rows of a warp's store share banks: 8 ways). Block r of the
  // cluster then sums its share of the rows, at most kSplitChunks float4 chunks a consumer thread
  // (cluster_split_chunk, gemm_tiles.hpp). Where KSPLIT divides neither the rows nor their chunks
  // among the consumer threads evenly (3: 42, 43 and 43 rows, 1344 or 1376 chunks on 256 threads),
  // a thread's last chunks may lie past its block's rows (kSplitEven false: checked).
  static constexpr int kSplitPitch = BN + 8;
  static constexpr int kSplitChunks = cluster_split_chunks(KSPLIT, BN, kConsumers * 128);
  static constexpr bool kSplitEven = kBM % KSPLIT == 0 && kBM / KSPLIT * BN / 4 % (kConsumers * 128) == 0;
  static_assert(KSPLIT == 1 || (CLUSTER == 1 && !kTmaStore && KSPLIT <= 8 && BN % 4 == 0 &&
                                STAGES * kStageBytes >= kBM * kSplitPitch * 4),
                "the cluster's split-K: no pairs, C from the sum (not TMA), at most 8 blocks (the portable cluster), "
                "the float32 tile within the stage ring");
};

namespace wgmma_detail {

// A K-major operand: rows of 128 bytes (64 elements of K), 8-row groups 1024 bytes apart (the
// stride byte offset); the leading offset is unused with the swizzle. Step kk (k16, or k8 of
// tf32) starts 32 bytes further along the row.
__device__ __forceinline__ std::uint64_t desc_k_major(std::uint32_t panel, int kk) {
  return hopper::matrix_desc(panel + kk * 32, 16, 1024);
}
// An M- or N-major operand: [64 k][64] boxes of 128-byte rows, each 64 columns wide; the leading
// offset steps from one box to the next along M or N (8 KiB), the stride offset from one 8-row
// group of k to the next (1024 bytes). k16 step kk starts 16 rows (2048 bytes) down.
__device__ __forceinline__ std::uint64_t desc_mn_major(std::uint32_t panel, int kk) {
  return hopper::matrix_desc(panel + kk * 2048, 8192, 1024);
}

// A float4 of the shared memory of block `cta` of the cluster, at the offset `local` has in this
// block's (mapa: the same variable in another block; this one's own included). Volatile, so that
// it stays between the cluster barriers around it; a run of them is still in flight together.
__device__ __forceinline__ float4 ld_cluster_f4(std::uint32_t local, std::uint32_t cta) {
  std::uint32_t remote = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(cta));
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote)
               : "memory");
  return v;
}

// ld_cluster_f4, or zeros without a load where `load` is false (a predicated load, not a branch:
// a run of them stays in flight together), so that no read of another block is left outstanding
// for elements that are never stored.
__device__ __forceinline__ float4 ld_cluster_f4_or_zero(std::uint32_t local, std::uint32_t cta, bool load) {
  std::uint32_t remote = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(cta));
  float4 v;
  asm volatile(
      "{\n .reg .pred q;\n setp.ne.b32 q, %5, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n mov.b32 %3, 0;\n"
      " @q ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(remote), "r"(static_cast<int>(load))
      : "memory");
  return v;
}

// A barrier of every thread of the cluster that publishes nothing (arrive.relaxed): where the
// barrier only orders reads already done (their values used) before another block's later
// writes. cluster_sync's release arrive is MEMBAR.ALL.CTA, MEMBAR.ALL.GPU, ERRBAR and CGAERRBAR
// in ptxas 13.0's SASS for sm_90a, and the GPU-wide fence waits for this thread's global stores
// (a tile of C just written) to complete; this one is the bare UCGABAR_ARV.
__device__ __forceinline__ void cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}

}  // namespace wgmma_detail

// map_c is C's tensor map when store_via_tma (C's rows whole 16-byte chunks, C 16-byte aligned:
// what TMA can describe), and is then used by the configurations that store through shared memory.
// kTransposedC (the swapped product's, direct configurations only): c holds C^T, n rows of row
// stride ldc, so that the tile's element (row, col) goes to c[col * ldc + row]; ldc is unused
// otherwise (C contiguous [m, n]). A template flag rather than a runtime stride: the forward's
// instantiations compile to the epilogue they had (no second store loop, no branch in it), and
// the swap's configurations are instantiated for the swap alone, so the flag adds no kernel.
// With kTransposedC and partials, the tile's last unit sums the partials into C (counters: one a
// tile, zero at launch, zero again at exit); counters is unused otherwise.
template <class T, int BN, int STAGES, bool kTmaStore, int CLUSTER, bool kAMajorM, bool kBMajorN, bool kTransposedC,
          Fault F, int KSPLIT = 1, bool kStreamK = false>
__global__ void __launch_bounds__(WgmmaGemm<T, BN, STAGES, kTmaStore, CLUSTER, kAMajorM, kBMajorN, F, KSPLIT>::kThreads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_c, bool store_via_tma, T* __restrict__ c, int m,
                      int n, int k, int splits, float* __restrict__ partials, std::int64_t ldc,
                      unsigned* __restrict__ counters) {
#ifdef KBENCH_HOPPER_DEVICE_CODE
  static_assert(!kTransposedC || !kTmaStore, "a transposed C is stored from registers");
  static_assert(KSPLIT == 1 || !kTransposedC, "the cluster's split-K is the forward's");
  static_assert(!kStreamK || (CLUSTER == 1 && KSPLIT == 1 && !kTransposedC), "stream-K: no pairs, no cluster split");
  using G = WgmmaGemm<T, BN, STAGES, kTmaStore, CLUSTER, kAMajorM, kBMajorN, F, KSPLIT>;
  using namespace hopper;
  using namespace wgmma_detail;
  constexpr int kBM = G::kBM, kBK = G::kBK;
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t base = (smem_addr(smem_raw) + 1023) & ~1023u;
  const auto stage_a = [&](int s) { return base + s * G::kStageBytes; };
  const auto stage_b = [&](int s) { return base + s * G::kStageBytes + G::kAStageBytes; };
  const std::uint32_t c_smem = base + STAGES * G::kStageBytes;  // consumer i's at + i kCBytes
  const std::uint32_t bars = c_smem + G::kConsumers * G::kCBytes;
  const auto full = [&](int s) { return bars + 8 * s; };
  const auto empty = [&](int s) { return bars + 8 * (STAGES + s); };

  const int warpgroup = static_cast<int>(threadIdx.x) / 128, tid = static_cast<int>(threadIdx.x) % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);                 // the producer's expect_tx arrival, then the bytes
      mbar_init(empty(s), G::kConsumers * CLUSTER);  // one arrival per consumer warpgroup of the cluster
    }
    fence_barrier_init();
    prefetch_tensor_map(&map_a);
    prefetch_tensor_map(&map_b);
  }
  __syncthreads();
  if constexpr (CLUSTER > 1) cluster_sync();  // the peer's barriers exist before anything reaches them

  // Tiles are handed out by cluster: cluster tile (row p, column q) is tiles (CLUSTER p + rank, q),
  // a column of CLUSTER tiles that share B's panels. A tile below M loads zeros and stores nothing.
  const int rank = CLUSTER > 1 ? static_cast<int>(cluster_rank()) : 0;
  const int first = static_cast<int>(blockIdx.x) / CLUSTER, stride = static_cast<int>(gridDim.x) / CLUSTER;
  const int grid_m = (m + kBM * CLUSTER - 1) / (kBM * CLUSTER), grid_n = (n + BN - 1) / BN, tiles = grid_m * grid_n;
  const auto tile_of = [&](int t) {
    const TileCoord p = grouped_tile(t, grid_m, grid_n);
    return TileCoord{p.m * CLUSTER + rank, p.n};
  };
  int k_tiles = (k + kBK - 1) / kBK;
  if constexpr (F == Fault::drop_k_tail) k_tiles = k / kBK;
  // Calls visit(unit, split) for each of this block's units in order, the producer's walk and the
  // consumers' alike. Split-K's unit u: tile u / splits, k-tiles [kt_begin, kt_end) of split
  // u % splits (possibly none); stream-K's: stream_k_walk's (gemm_tiles.hpp), splits 1.
  const int units = tiles * splits, per_split = (k_tiles + splits - 1) / splits;
  const auto walk = [&](auto&& visit) {
    if constexpr (kStreamK) {
      stream_k_walk(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x), tiles, k_tiles,
                    [&](const WorkUnit& w) { visit(w, 0); });
    } else {
      for (int u = first; u < units; u += stride) {
        const int split = u % splits;
        visit(WorkUnit{u / splits, min(split * per_split, k_tiles), min((split + 1) * per_split, k_tiles)}, split);
      }
    }
  };

  if (warpgroup == 0) {
    release_registers<G::kProducerRegisters>();
    // KSPLIT > 1: the whole warpgroup walks the units, thread 0 loading, since every thread of
    // the cluster takes part in the two cluster barriers of each unit's sum; and the producer may
    // not load the next unit's stages before the second, for the sum is in the stage ring.
    if (tid == 0 || KSPLIT > 1) {
      int it = 0;  // stages filled so far, over every tile: stage it % STAGES, round it / STAGES
      walk([&](const WorkUnit& unit, int) {
        const TileCoord tile = tile_of(unit.tile);
        const int m0 = tile.m * kBM, n0 = tile.n * BN;
        for (int kt = unit.kt_begin; (KSPLIT == 1 || tid == 0) && kt < unit.kt_end; ++kt, ++it) {
          const int s = it % STAGES, round = it / STAGES, k0 = kt * kBK;
          if (round > 0) mbar_wait(empty(s), (round - 1) & 1);  // the consumers (of both blocks) are done with it
          mbar_arrive_expect_tx(full(s), G::kStageBytes);
          if constexpr (kAMajorM) {
            for (int p = 0; p < kBM / 64; ++p) tma_load_2d(stage_a(s) + p * G::kPanelBytes, &map_a, full(s), m0 + 64 * p, k0);
          } else {
            tma_load_2d(stage_a(s), &map_a, full(s), k0, m0);
          }
          if constexpr (CLUSTER > 1) {  // this block's half of B's panels, to both blocks of the pair
            constexpr int kMine = BN / 64 / CLUSTER;
            for (int p = rank * kMine; p < (rank + 1) * kMine; ++p)
              tma_load_2d_multicast(stage_b(s) + p * G::kPanelBytes, &map_b, full(s), n0 + 64 * p, k0,
                                    static_cast<std::uint16_t>((1 << CLUSTER) - 1));
          } else if constexpr (kBMajorN) {
            for (int p = 0; p < BN / 64; ++p) tma_load_2d(stage_b(s) + p * G::kPanelBytes, &map_b, full(s), n0 + 64 * p, k0);
          } else {
            tma_load_2d(stage_b(s), &map_b, full(s), k0, n0);
          }
        }
        if constexpr (KSPLIT > 1) {  // the consumers' two barriers of this unit's sum (it publishes nothing)
          __syncwarp();
          cluster_sync_relaxed();
          cluster_sync_relaxed();
        }
      });
    }
  } else {
    claim_registers<G::kConsumerRegisters>();
    const int consumer = warpgroup - 1;  // rows 64 consumer .. of the tile
    const int warp = tid / 32, lane = tid % 32;
    const bool pairs_aligned = n % 2 == 0 && (reinterpret_cast<std::uintptr_t>(c) % (2 * sizeof(T))) == 0;
    int it = 0;
    // kTransposedC: the tile's values v (laid out as acc) to C^T's rows. Element (row, col) to
    // C^T's row col: a pair's two columns are two rows of c, so each goes alone; a warp's 8 lanes
    // of one lane % 4 write 8 consecutive elements of a row.
    const auto store_transposed = [&](const float(&v)[G::kAccumulators], int row0, int n0) {
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = n0 + 8 * j + 2 * (lane % 4) + e;
          if (col >= n) continue;
          T* const out = c + static_cast<std::int64_t>(col) * ldc;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = row0 + 8 * h;
            if (row < m) out[row] = T(v[4 * j + 2 * h + e]);
          }
        }
      }
    };
    // Frees stage s for the producers that fill it: this block's, and the peer's, which multicasts.
    const auto release = [&](int s) {
      if (tid != 0) return;
      if constexpr (CLUSTER > 1)
        for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(empty(s), r);
      else
        mbar_arrive(empty(s));
    };
    // KSPLIT > 1, the cluster's split-K: the grid is whole clusters of KSPLIT blocks, block r of
    // a cluster walking units c KSPLIT + r, (c + C) KSPLIT + r, ... (C clusters), so the cluster's
    // blocks hold the KSPLIT K ranges of one tile at a time, range r in block r, and walk the tiles
    // together. The tile's sum, from v (laid out as acc), in the cluster's shared memory and no
    // global workspace, shared out: each block writes its float32 tile into its own stage ring;
    // then block r sums its share of the tile's rows (cluster_split_chunk) over the KSPLIT blocks'
    // rings (distributed shared memory, ld.shared::cluster) in block order 0, 1, ... from 0.f, as
    // wgmma_reduce_kernel sums its slices (the same bits every run, and as the reduce kernel's at
    // the same splits), and stores them into C, 4 columns a store. Two cluster barriers, which
    // every thread of the cluster (the producers too) passes: the tiles written before any is
    // read; every read done before any block loads its ring again or leaves.
    const auto cluster_split_sum = [&](const float(&v)[G::kAccumulators], int rank, int m0, int n0) {
      if constexpr (KSPLIT > 1) {
        // Both consumers' wgmmas are done with the ring (the producer loads nothing into it
        // before the second barrier).
        named_barrier(G::kConsumersBarrier, G::kConsumers * 128);
        const int r = consumer * 64 + warp * 16 + lane / 4;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            st_shared_pair<float>(base + ((r + 8 * h) * G::kSplitPitch + 8 * j + 2 * (lane % 4)) * 4, v[4 * j + 2 * h],
                                  v[4 * j + 2 * h + 1]);
        // The ring's generic writes, ordered before the async proxy's (the next unit's TMA loads)
        // here, before the release barrier that publishes them to the producer that issues them.
        fence_proxy_async_shared();
        __syncwarp();  // the barrier is .aligned: the warp's threads together
        cluster_sync();
        // Chunk i of this thread: float4 (consumer 128 + tid) + 256 i of the block's rows, row
        // by row, a warp's 32 chunks consecutive (a row of 512 bytes at BN = 128: no bank conflict).
        constexpr int kChunks = G::kSplitChunks;
        const int ctid = consumer * 128 + tid;
        std::uint32_t at[kChunks];
        bool in_m[kChunks];  // a chunk of this block's rows and below M: the others are neither read nor stored
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
          const ClusterSplitChunk chunk = cluster_split_chunk(KSPLIT, BN, G::kConsumers * 128, rank, ctid, i);
          at[i] = base + (chunk.row * G::kSplitPitch + chunk.col) * 4;
          in_m[i] = (G::kSplitEven || chunk.valid) && m0 + chunk.row < m;
        }
        float4 x[KSPLIT][kChunks];  // every load first: one round trip of the cluster for them all
#pragma unroll
        for (int q = 0; q < KSPLIT; ++q)
#pragma unroll
          for (int i = 0; i < kChunks; ++i)
            x[q][i] = ld_cluster_f4_or_zero(at[i], F == Fault::reverse_split_order ? KSPLIT - 1 - q : q, in_m[i]);
        const bool quads_aligned = n % 4 == 0 && reinterpret_cast<std::uintptr_t>(c) % (4 * sizeof(T)) == 0;
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
          float sum[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
          for (int q = 0; q < KSPLIT; ++q) {
            sum[0] += x[q][i].x;
            sum[1] += x[q][i].y;
            sum[2] += x[q][i].z;
            sum[3] += x[q][i].w;
          }
          if (!in_m[i]) continue;
          const ClusterSplitChunk chunk = cluster_split_chunk(KSPLIT, BN, G::kConsumers * 128, rank, ctid, i);
          const int row = m0 + chunk.row, col = n0 + chunk.col;
          T* const out = c + static_cast<std::int64_t>(row) * n + col;
          if (quads_aligned && col + 3 < n) {
            struct alignas(4 * sizeof(T)) Quad {
              T e[4];
            } quad;
#pragma unroll
            for (int e = 0; e < 4; ++e) quad.e[e] = T(sum[e]);
            *reinterpret_cast<Quad*>(out) = quad;
          } else {
#pragma unroll
            for (int e = 0; e < 4; ++e)
              if (col + e < n) out[e] = T(sum[e]);
          }
        }
        // This thread's generic-proxy reads of the ring, ordered before the copy engine's
        // (async-proxy) writes of the next unit's stages, which the barrier lets go. Relaxed:
        // every remote read issued above has been consumed (its sum stored), and the ring's
        // writes were published, proxy-fenced, by the first barrier; a release here would wait
        // for C's stores.
        fence_proxy_async_shared();
        __syncwarp();
        cluster_sync_relaxed();
      }
    };
    // kStreamK: where a tile is cut between blocks (stream_k_walk), the float32 partial tiles go
    // through global memory (`partials`: one slot of kBM x BN floats a block; `counters`: one flag
    // a block, zero at launch and again at exit). Each consumer thread writes and reads its own
    // accumulators, float4 q of thread i at (q x 256 + i) x 16 bytes of the slot, so a warp's
    // accesses are 512 contiguous bytes. A unit that does not start the tile (the first of this
    // block's stream-K range) writes its accumulators to this block's slot, fences them, and one
    // thread sets the flag once both consumers have (false: no epilogue). A unit that starts the
    // tile but stops short of K (the last of this block's range) takes the unit.partials blocks
    // after this one in order: waits for the block's flag, clears it, reads its slot through L2
    // (ld.global.cg: never a stale L1 line) and adds it to v, so the sum's order is the same every
    // run; then it goes on to the epilogue as a whole tile does (true). Those blocks hold their
    // partials as their first units, so the waits are short, and every block of the persistent
    // grid is resident (one a multiprocessor, at most as many as there are), so they end.
    const auto stream_k_fixup = [&](float(&v)[G::kAccumulators], const WorkUnit& unit) {
      constexpr int kQuads = G::kAccumulators / 4, kThreadsC = G::kConsumers * 128;
      const int ctid = consumer * 128 + tid;
      float4* const slots = reinterpret_cast<float4*>(partials);
      if (unit.kt_begin > 0) {
        float4* const mine = slots + static_cast<std::int64_t>(blockIdx.x) * kQuads * kThreadsC + ctid;
#pragma unroll
        for (int q = 0; q < kQuads; ++q) __stcg(mine + q * kThreadsC, make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]));
        __threadfence();
        named_barrier(G::kConsumersBarrier, kThreadsC);
        if (ctid == 0) atomicExch(&counters[blockIdx.x], 1u);
        return false;
      }
      for (int j = 1; j <= unit.partials; ++j) {
        const int from = static_cast<int>(blockIdx.x) + j;
        if (ctid == 0) {
          volatile unsigned* const flag = counters + from;
          while (*flag == 0) {
          }
          *flag = 0;  // ready for the next launch
        }
        named_barrier(G::kConsumersBarrier, kThreadsC);
        __threadfence();
        if constexpr (F == Fault::skip_stream_k_partial) continue;
        const float4* const next = slots + static_cast<std::int64_t>(from) * kQuads * kThreadsC + ctid;
        // Eight float4 loads in flight at a time: 32 registers beside the accumulators' BN / 2.
        constexpr int kGroup = kQuads < 8 ? kQuads : 8;
#pragma unroll
        for (int q0 = 0; q0 < kQuads; q0 += kGroup) {
          float4 p[kGroup];
#pragma unroll
          for (int d = 0; d < kGroup; ++d) p[d] = __ldcg(next + (q0 + d) * kThreadsC);
#pragma unroll
          for (int d = 0; d < kGroup; ++d) {
            v[4 * (q0 + d)] += p[d].x;
            v[4 * (q0 + d) + 1] += p[d].y;
            v[4 * (q0 + d) + 2] += p[d].z;
            v[4 * (q0 + d) + 3] += p[d].w;
          }
        }
      }
      return true;
    };
    walk([&](const WorkUnit& unit, int split) {
      const int t = unit.tile;
      const TileCoord tile = tile_of(t);
      const int m0 = tile.m * kBM, n0 = tile.n * BN;
      float acc[G::kAccumulators];
#pragma unroll
      for (int i = 0; i < G::kAccumulators; ++i) acc[i] = 0.f;
      int previous = -1;  // the stage whose wgmmas may still be in flight
      for (int kt = unit.kt_begin; kt < unit.kt_end; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(full(s), (it / STAGES) & 1);
        const std::uint32_t a_panel = stage_a(s) + consumer * G::kPanelBytes, b_panel = stage_b(s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < G::kKSteps; ++kk) {
          const std::uint64_t da = kAMajorM ? desc_mn_major(a_panel, kk) : desc_k_major(a_panel, kk);
          const std::uint64_t db = kBMajorN ? desc_mn_major(b_panel, kk) : desc_k_major(b_panel, kk);
          wgmma_detail::Wgmma<T, BN, kAMajorM, kBMajorN>::run(acc, da, db);
          if constexpr (F == Fault::half_accumulator) {  // 16-bit partial sums after each k16 step
            wgmma_commit();
            wgmma_wait<0>();
            fence_registers(acc);
#pragma unroll
            for (int i = 0; i < G::kAccumulators; ++i) acc[i] = static_cast<float>(static_cast<T>(acc[i]));
            wgmma_fence();
          }
        }
        wgmma_commit();
        wgmma_wait<1>();  // the previous stage's wgmmas are done: free it
        if (previous >= 0) release(previous);
        previous = s;
      }
      wgmma_wait<0>();
      fence_registers(acc);
      if (previous >= 0) release(previous);
      if constexpr (KSPLIT > 1) {
        cluster_split_sum(acc, split, m0, n0);
        return;
      }
      if constexpr (F == Fault::skip_tile)
        if (t == tiles / 2) return;
      if constexpr (kStreamK)
        if (!stream_k_fixup(acc, unit)) return;

      // Accumulator 4j + e: row lane / 4 (+ 8 for e >= 2) of the warp's 16, columns 2 (lane % 4)
      // and + 1 of the j-th 8 columns.
      const int row0 = m0 + consumer * 64 + warp * 16 + lane / 4;
      if (!kStreamK && partials != nullptr) {  // the float32 partial tile, into this split's slice
        float* const slice = partials + static_cast<std::int64_t>(split) * m * n;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int col = n0 + 8 * j + 2 * (lane % 4);
          if (col >= n) continue;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = row0 + 8 * h;
            if (row >= m) continue;
            float* const at = slice + static_cast<std::int64_t>(row) * n + col;
            if (col + 1 < n && n % 2 == 0) *reinterpret_cast<float2*>(at) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
            else {
              at[0] = acc[4 * j + 2 * h];
              if (col + 1 < n) at[1] = acc[4 * j + 2 * h + 1];
            }
          }
        }
        if constexpr (kTransposedC) {
          // The tile's count: every thread's partials visible GPU-wide (each fences its own
          // stores), then one ticket for the two consumer warpgroups, broadcast to them; the
          // producer warpgroup is elsewhere in its loop, so a named barrier, not __syncthreads.
          __shared__ bool last_unit;
          __threadfence();
          named_barrier(G::kConsumersBarrier, G::kConsumers * 128);
          if (consumer == 0 && tid == 0)
            last_unit = atomicAdd(&counters[t], 1u) == static_cast<unsigned>(splits - 1);
          named_barrier(G::kConsumersBarrier, G::kConsumers * 128);
          if (!last_unit) return;
          // The last unit: the others fenced their partials before counting. Read them through
          // L2 (ld.global.cg: never the non-coherent L1, which may hold stale lines), this unit's
          // own slice too (its own stores, the same floats as its accumulators, which it frees
          // so), and sum slice by slice in split order from 0.f, as wgmma_reduce_kernel does, so
          // that the bits do not depend on which unit came last. The loads of kSumGroup slices
          // at a time are predicated, not branched around (an element outside C reads nothing,
          // and its sum is never stored), so that they are in flight together: one L2 round trip
          // for the group, not one a slice or an element. Addresses: a row's base and the
          // column's constant offset.
          __threadfence();
#pragma unroll
          for (int i = 0; i < G::kAccumulators; ++i) acc[i] = 0.f;
          const int col0 = n0 + 2 * (lane % 4);  // element i's column: col0 + 8 (i / 4) + i % 2
          const std::int64_t row_at[2] = {static_cast<std::int64_t>(row0) * n + col0,
                                          static_cast<std::int64_t>(row0 + 8) * n + col0};
          const bool row_in[2] = {row0 < m, row0 + 8 < m};
          const auto slice_of = [&](int q) { return F == Fault::reverse_split_order ? splits - 1 - q : q; };
          for (int q0 = 0; q0 < splits; q0 += G::kSumGroup) {
            float x[G::kSumGroup][G::kAccumulators];
#pragma unroll
            for (int d = 0; d < G::kSumGroup; ++d) {
              const float* const from = partials + static_cast<std::int64_t>(slice_of(min(q0 + d, splits - 1))) * m * n;
#pragma unroll
              for (int i = 0; i < G::kAccumulators; ++i) {  // the accumulators' layout: i = 4 j + 2 h + e
                const int h = (i / 2) % 2, dc = 8 * (i / 4) + i % 2;
                x[d][i] = ld_cg_or_zero(from + row_at[h] + dc, row_in[h] && col0 + dc < n);
              }
            }
#pragma unroll
            for (int d = 0; d < G::kSumGroup; ++d) {
              if (q0 + d >= splits) break;
#pragma unroll
              for (int i = 0; i < G::kAccumulators; ++i) acc[i] += x[d][i];
            }
          }
          store_transposed(acc, row0, n0);
          if constexpr (F != Fault::keep_split_counter)
            if (consumer == 0 && tid == 0) counters[t] = 0;  // ready for the next launch
        }
        return;
      }
      if constexpr (kTransposedC) {
        store_transposed(acc, row0, n0);
        return;
      }
      if (kTmaStore && store_via_tma) {
        const std::uint32_t mine = c_smem + consumer * G::kCBytes;
        if (tid == 0) bulk_wait_read<0>();  // the last tile's stores have read the buffer
        named_barrier(1 + consumer, 128);
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          // In the tile; box col / kCBoxCols, 16-byte chunk (col % kCBoxCols) / kCChunk.
          const int col = 8 * j + 2 * (lane % 4);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = warp * 16 + lane / 4 + 8 * h;
            const std::uint32_t at = mine + (col / G::kCBoxCols) * G::kPanelBytes + row * 128 +
                                     ((((col % G::kCBoxCols) / G::kCChunk) ^ (row % 8)) * 16) +
                                     (col % G::kCChunk) * G::kElement;
            st_shared_pair<T>(at, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
          }
        }
        fence_proxy_async_shared();  // the writes above, before the copy engine reads them
        named_barrier(1 + consumer, 128);
        if (tid == 0) {
          for (int box = 0; box < BN / G::kCBoxCols; ++box)
            tma_store_2d(&map_c, mine + box * G::kPanelBytes, n0 + G::kCBoxCols * box, m0 + consumer * 64);
          bulk_commit();
        }
        return;
      }
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int col = n0 + 8 * j + 2 * (lane % 4);
        if (col >= n) continue;
        const bool both = col + 1 < n;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = row0 + 8 * h;
          if (row >= m) continue;
          store_pair(c, static_cast<std::int64_t>(row) * n + col, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1], both,
                     both && pairs_aligned);
        }
      }
    });
    if (kTmaStore && tid == 0) bulk_wait<0>();  // no store may outlive the block's shared memory
  }
  if constexpr (CLUSTER > 1) {  // no block leaves while its peer may still write into it or arrive on it
    __syncwarp();
    cluster_sync();
  }
#else
  __trap();  // never launched: the host checks the device first
#endif
}

}  // namespace kbench::gemm

namespace kbench::gemm {

// C = the sum of the `splits` float32 slices of partials ([splits][M][N]), in slice order.
template <class T>
__global__ void wgmma_reduce_kernel(const float* __restrict__ partials, T* __restrict__ c, std::int64_t count,
                                    int splits) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float sum = 0.f;
    for (int s = 0; s < splits; ++s) sum += partials[s * count + i];
    c[i] = static_cast<T>(sum);
  }
}

// A 2-D tensor map for TMA over a row-major operand (or C) [rows, cols] (row stride in elements) of
// elements of type T (float16, bfloat16 or float32), boxes of [box_rows, box_cols] (box_cols
// elements <= 128 bytes), 128-byte swizzle, zeros outside. Host code (gemm_wgmma.cu); throws
// std::invalid_argument when TMA cannot describe the operand (an unaligned base or stride).
CUtensorMap make_operand_map(const void* base, CUtensorMapDataType type, int element_bytes, std::int64_t rows,
                             std::int64_t cols, std::int64_t row_stride, int box_rows, int box_cols);
template <class T>
CUtensorMap make_operand_map(const T* base, std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                             int box_rows, int box_cols) {
  constexpr CUtensorMapDataType type = std::is_same_v<T, float>          ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                       : std::is_same_v<T, __nv_bfloat16> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                                          : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  return make_operand_map(base, type, sizeof(T), rows, cols, row_stride, box_rows, box_cols);
}

// The mainloop's launch for launch_wgmma_gemm and launch_wgmma_swap: C = op(A).op(B) with
// wgmma_gemm_kernel, A and B as they lie in memory ([M, K] or, kAMajorM, [K, M] rows; [K, N] or,
// !kBMajorN, [N, K] rows; row strides lda, ldb), K >= 1; a persistent grid of at most `blocks`
// blocks (whole clusters of W.cluster), configuration W (gemm_tiles.hpp; W.cluster 2 needs B
// N-major, !kBMajorN is refused); K cut into `splits` ranges. With partials (splits x M x N
// floats) every unit writes its float32 tile there and C is not touched, except with
// kTransposedC, where each tile's last unit sums them into C^T (counters: one unsigned a tile of
// the grid, zero); without, splits is 1 and C (contiguous [M, N]) is written, or, kTransposedC
// (W.direct only), its transpose: c holds C^T [N, M] of row stride ldc. Sets the kernel's
// shared-memory limit the first time. W.streamk: splits is 1 whatever it says, and where
// stream_k_tiles(tiles, grid, k_tiles) > 0, partials holds a slot of 128 x W.bn floats and counters a flag
// (zero) for each block of the grid (nullptr: cudaErrorInvalidValue).
template <class T, WgmmaConfig W, bool kAMajorM, bool kBMajorN, Fault F = Fault::none, bool kTransposedC = false>
cudaError_t launch_wgmma_mainloop(const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c, int m, int n,
                                  int k, int blocks, cudaStream_t stream, int splits, float* partials,
                                  std::int64_t ldc = 0, unsigned* counters = nullptr) {
  constexpr int BN = W.bn, CLUSTER = W.cluster;
  static_assert(!kTransposedC || W.direct, "a transposed C is stored from registers");
  using G = WgmmaGemm<T, BN, W.stages, !W.direct, CLUSTER, kAMajorM, kBMajorN, F, W.ksplit>;
  // W.ksplit > 1: K is cut into W.ksplit ranges whatever `splits` says, summed in the kernel's
  // clusters (no partials); a cluster of W.ksplit blocks a tile.
  if constexpr (W.ksplit > 1) {
    splits = W.ksplit;
    partials = nullptr;
  }
  if constexpr (W.streamk) splits = 1;
  constexpr int kClusterBlocks = CLUSTER * W.ksplit;  // one of the two is 1
  const CUtensorMap map_a = kAMajorM ? make_operand_map(a, k, m, lda, G::kBK, 64)
                                     : make_operand_map(a, m, k, lda, G::kBM, G::kBK);
  const CUtensorMap map_b = kBMajorN ? make_operand_map(b, k, n, ldb, G::kBK, 64)
                                     : make_operand_map(b, n, k, ldb, BN, G::kBK);
  // C's rows must be whole 16-byte chunks on a 16-byte-aligned base for TMA to store them.
  const bool store_via_tma = !W.direct && (partials == nullptr || W.streamk) && n % G::kCChunk == 0 &&
                             reinterpret_cast<std::uintptr_t>(c) % 16 == 0;
  const CUtensorMap map_c = store_via_tma ? make_operand_map(c, m, n, n, 64, G::kCBoxCols) : map_a;
  const auto kernel =
      wgmma_gemm_kernel<T, BN, W.stages, !W.direct, CLUSTER, kAMajorM, kBMajorN, kTransposedC, F, W.ksplit, W.streamk>;
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes);
  if (attr != cudaSuccess) return attr;
  // Units of work are cluster tiles (CLUSTER tiles of one column) times splits; the grid is
  // whole clusters, at most `blocks` blocks.
  const long long cluster_rows = (m + G::kBM * CLUSTER - 1) / (G::kBM * CLUSTER);
  // (With W.ksplit a cluster's unit is a whole tile, its W.ksplit ranges.)
  const long long units = cluster_rows * ((n + BN - 1) / BN) * (W.ksplit > 1 ? 1 : splits);
  long long clusters = units < blocks / kClusterBlocks ? units : blocks / kClusterBlocks;
  if constexpr (kClusterBlocks > 1) {  // a cluster launch only where there are clusters
    // A cluster lives in one GPC: fewer pairs may fit at once than half the multiprocessors,
    // and a persistent grid beyond what is resident would run its last clusters as a second wave.
    static const int resident = resident_clusters(kernel, kClusterBlocks, G::kThreads, G::kSmemBytes);
    if (resident > 0 && clusters > resident) clusters = resident;
  }
  if (W.streamk && stream_k_tiles(units, static_cast<int>(clusters), (k + G::kBK - 1) / G::kBK) > 0 &&
      (partials == nullptr || counters == nullptr))
    return cudaErrorInvalidValue;
  const LaunchShape shape{.grid = dim3(static_cast<unsigned>((clusters > 0 ? clusters : 1) * kClusterBlocks)),
                          .block = dim3(G::kThreads),
                          .shared = G::kSmemBytes,
                          .stream = stream,
                          .cluster = kClusterBlocks};
  if (const cudaError_t err =
          launch_ex(kernel, shape, map_a, map_b, map_c, store_via_tma, c, m, n, k, splits, partials, ldc, counters);
      err != cudaSuccess)
    return err;
  return cudaGetLastError();
}

// C = op(A).op(B) as launch_wgmma_mainloop says, C contiguous [M, N]; K cut into `splits` ranges
// (partials: splits x M x N floats, when splits > 1), then summed by wgmma_reduce_kernel. W.streamk:
// partials and counters are the stream-K slots and flags (stream_k_workspace_bytes), splits unused.
template <class T, WgmmaConfig W, bool kAMajorM, bool kBMajorN, Fault F = Fault::none>
cudaError_t launch_wgmma_gemm(const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c, int m, int n, int k,
                              int blocks, cudaStream_t stream, int splits = 1, float* partials = nullptr,
                              unsigned* counters = nullptr) {
  if constexpr (W.streamk) {  // the cut tiles' partials added by the blocks that hold their starts
    return launch_wgmma_mainloop<T, W, kAMajorM, kBMajorN, F>(a, lda, b, ldb, c, m, n, k, blocks, stream, 1, partials,
                                                              0, counters);
  } else if constexpr (W.ksplit > 1) {  // summed in the kernel's clusters: no partials, no second kernel
    return launch_wgmma_mainloop<T, W, kAMajorM, kBMajorN, F>(a, lda, b, ldb, c, m, n, k, blocks, stream, W.ksplit,
                                                              nullptr);
  } else {
    if (const cudaError_t err = launch_wgmma_mainloop<T, W, kAMajorM, kBMajorN, F>(
            a, lda, b, ldb, c, m, n, k, blocks, stream, splits, splits > 1 ? partials : nullptr);
        err != cudaSuccess || splits == 1)
      return err;
    const std::int64_t count = static_cast<std::int64_t>(m) * n;
    const long long reduce_blocks = (count + 255) / 256;
    wgmma_reduce_kernel<T><<<static_cast<unsigned>(reduce_blocks < 1024 ? reduce_blocks : 1024), 256, 0, stream>>>(
        partials, c, count, splits);
    return cudaGetLastError();
  }
}

// C [M, N] (row stride ldc) = A [M, K] . B [K, N] (row strides lda, ldb; K >= 1) as the swapped
// product C^T = B^T . A^T: the mainloop in its <kAMajorM, !kBMajorN> layout with B as A' ([K, N]
// rows are A'^T for A' = B^T [N, K]) and A as B' (its [M, K] rows are B'^T for B' = A^T), so a
// tile is 128 rows of N by W.bn columns of M. C^T's rows cannot be TMA-stored into C (they are
// its columns; at M = 1, 2 bytes), so C is written from registers, by one kernel either way:
//   - one split: the kernel stores its tile of C^T transposed into C (kTransposedC: element
//     (n, m) to c[m * ldc + n]);
//   - several (K cut into `splits` ranges): each unit writes float32 partials ([splits][N][M],
//     splits x M x N floats) and counts itself on its tile's counter; the tile's last unit sums
//     the slices in order and stores the sum transposed into C the same way, then zeroes the
//     counter. counters: wgmma_swap_tiles(W, m, n) unsigneds, zero before the first launch (each
//     launch leaves them zero).
// The partials must be given either way (one slice at least; unused at one split, as are the
// counters).
template <class T, WgmmaConfig W, Fault F = Fault::none>
cudaError_t launch_wgmma_swap(const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc,
                              int m, int n, int k, int blocks, cudaStream_t stream, int splits, float* partials,
                              unsigned* counters) {
  static_assert(W.direct && W.cluster == 1 && W.ksplit == 1, "the swap writes from registers: no C tile in shared memory, no pairs");
  if (partials == nullptr || splits < 1 || (splits > 1 && counters == nullptr)) return cudaErrorInvalidValue;
  // One instantiation for both: without partials the kernel stores its tiles, with them it sums.
  return launch_wgmma_mainloop<T, W, true, false, F, true>(b, ldb, a, lda, c, n, m, k, blocks, stream, splits,
                                                           splits > 1 ? partials : nullptr, ldc, counters);
}

}  // namespace kbench::gemm
