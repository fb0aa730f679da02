// The tile configurations of the tensor-core kernels (gemm_mma.cu), visible to host code: the
// autotuner, the plan a record carries and the tests walk this list.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace kbench::gemm {

// A block tile of BM x BN outputs stepping through K by BK, split among warps of WM x WN, with
// `stages` shared-memory buffers in flight.
struct TileConfig {
  int bm, bn, bk, wm, wn, stages;
  const char* tag = "";  // tells apart configurations of one block tile ("_s4", "_w8")
  bool fast = false;     // the software-pipelined mainloop (mma_gemm_fast_kernel, gemm_mma.cuh)
  int warps() const { return (bm / wm) * (bn / wn); }
  // Bytes of A and B per stage, times the stages (16-bit elements unless said).
  int smem_bytes(int element_bytes = 2) const { return stages * (bm * bk + bk * bn) * element_bytes; }
  std::string name() const { return std::to_string(bm) + "x" + std::to_string(bn) + tag; }  // "128x256"
};

// Tiles as a one-dimensional grid visits them: GROUP_M rows of tiles at a time, column by
// column, so that the blocks resident together share A's row panels and B's column panels in L2.
inline constexpr int kGroupM = 8;

// From the largest (eight warps of 64 x 64, for large square products) to the narrowest (16
// rows, for M of a decode step). BK = 64: a tile row of A is 128 bytes, the width the XOR
// swizzle works on; BN >= 64 for the same reason in B.
// Two more of the large tiles, for the lead's comparison on the H200: the same 8 warps of 64 x
// 64 with a fourth stage (192 KiB, one block per SM), and 128 x 128 with 8 warps of 64 x 32
// (fewer registers a thread, two blocks and 16 warps per SM to hide ldmatrix and mma latency).
// The `_fast` entries run the same tiles through the software-pipelined mainloop (fragments
// double-buffered in registers, the next tile's first fragments loaded across the barrier, the
// next copies issued before the current mma's), for the comparison against the entries above.
// (Tried and dropped: the 128 x 256 tile among 16 warps of 64 x 32, four warps a scheduler to
// cover the waits that leave the tensor pipe idle 31% of the time at 8 warps (ncu): 128
// registers a thread with 64 bytes spilled, 366.5 us against 310.1 us at float16 4096^3,
// results/sweep/sweep-20261201T183154Z-351776.json.)
inline constexpr std::array<TileConfig, 16> kTileConfigs{{
    {128, 256, 64, 64, 64, 3},
    {256, 128, 64, 64, 64, 3},
    {128, 128, 64, 64, 64, 3},
    {128, 64, 64, 64, 32, 4},
    {64, 128, 64, 32, 64, 4},
    {64, 64, 64, 32, 32, 4},
    {32, 128, 64, 32, 32, 4},
    {16, 128, 64, 16, 32, 4},
    {16, 64, 64, 16, 16, 4},
    {128, 256, 64, 64, 64, 4, "_s4"},
    {128, 128, 64, 64, 32, 3, "_w8"},
    {128, 256, 64, 64, 64, 3, "_fast", true},
    {128, 256, 64, 64, 64, 4, "_fast_s4", true},
    {256, 128, 64, 64, 64, 3, "_fast", true},
    {128, 128, 64, 64, 64, 3, "_fast", true},
    {128, 128, 64, 64, 32, 3, "_w8_fast", true},
}};

// The tf32 kernel's configurations (gemm_tf32.cu), float32 elements: BK = 32 floats is the same
// 128-byte tile row as the 16-bit kernels' BK = 64, and warps of 64 x 64 as theirs. The first
// is the `tf32` variant's; every entry is also a `tf32_<BM>x<BN>` variant, for the comparison
// (128 x 128 has four warps and 96 KiB a block: two blocks a multiprocessor).
inline constexpr std::array<TileConfig, 3> kTf32Configs{{
    {128, 256, 32, 64, 64, 3},
    {256, 128, 32, 64, 64, 3},
    {128, 128, 32, 64, 64, 3},
}};

}  // namespace kbench::gemm

namespace kbench::gemm {

// The Hopper kernel's configurations (gemm_wgmma.cuh): 128 x BN tiles (two consumer warpgroups
// of 64 rows), BK = 64, `stages` TMA stages of (128 + BN) x 64 x 2 bytes, and the epilogue either
// through shared memory and TMA stores (a 128 x BN tile of C beside the stages; the consumers
// go on to the next tile while the copy engine writes C) or, `direct`, from registers to global
// memory (4 stages of 128 x 256 leave no room for C). Each is a `wgmma_<name>` variant and a
// candidate of `auto` on sm_90 devices. BN = 192 is there against wave quantisation: 4096 x 4096
// is 512 tiles of 128 x 256 on 132 multiprocessors (3.9 waves), 704 of 128 x 192 (5.3).
// `cluster` 2 (`_c2`): blocks in pairs on vertically adjacent tiles, which need the same B tile:
// each loads half of B's panels and multicasts it to both, so L2 serves a third less (B as given,
// N-major, only: the forward's layout; BN / 64 even).
// `ksplit` > 1 (`_ks<S>`): split-K for shapes of too few tiles (a decode step's M up to 128 or
// so), K always cut into S ranges, the S blocks of a tile one thread-block cluster that sums the
// float32 partial tiles in its distributed shared memory (each block's in its own stage ring,
// once the mainloop is done with it) and stores C: no partials in global memory, no second
// kernel. `direct` (C from the sum, not from shared memory); no pairs.
// `streamk` (`_sk`): the last partial wave's tiles shared out by K among all blocks
// (stream_k_walk, below), against wave quantisation at large shapes: 16384x4096 is 2048 tiles of
// 128 x 256, 15.5 waves of 132, so a whole 16th wave runs half empty. No pairs, no split-K; B
// N-major.
struct WgmmaConfig {
  static constexpr int kBM = 128;
  int bn, stages;
  bool direct = false;
  int cluster = 1;
  int ksplit = 1;
  bool streamk = false;
  // A stage's rows are 128 bytes of K whatever the element; C's tile is kBM x bn elements.
  int smem_bytes(int element_bytes = 2) const {
    return stages * (kBM + bn) * 128 + (direct ? 0 : kBM * bn * element_bytes);
  }
  std::string name() const {
    if (ksplit > 1) return std::to_string(kBM) + "x" + std::to_string(bn) + "_ks" + std::to_string(ksplit);
    return std::to_string(kBM) + "x" + std::to_string(bn) + (direct ? "_direct" : "") + (cluster > 1 ? "_c2" : "") +
           (streamk ? "_sk" : "");
  }
  constexpr bool operator==(const WgmmaConfig&) const = default;
};

// 128 x 128 in clusters of 4 (_ks4: M up to 128, 32 tiles of N = 4096 on 128 blocks), of 2
// (_ks2: M up to 256) and of 3 (_ks3: 32 tiles on 96 blocks, since an H100 held 39 clusters of 3
// at once but only 30 of 4, so _ks4's 32 tiles ran as 30 and then 2; the sum cuts the tile's 128
// rows into 42, 43 and 43; measured 2-11% slower than _ks2 all the same, docs/kernels.md): 7 stages
// of 32 KiB (no C tile: 224 KiB), the 128 x 136 floats of the sum (68 KiB) within them.
// 128 x 64 in clusters of 2 (_ks2 of 128x64: M up to 128, N = 4096's 64 tiles on 128 blocks, 64
// clusters of 2 where 66 fit): each of 128 multiprocessors streams 768 KiB at 128x4096x4096
// where 128 x 128's 64 stream 1 MiB. cuBLAS's kernel there (ncu, session 25: nvjet 64x64 tiles,
// pairs, 128 blocks) reads HBM at 2.18 TB/s on an H100 against _ks2's 1.83 from 64 blocks.
// 9 stages of 24 KiB (216 KiB), the 128 x 72 floats of the sum (36 KiB) within them.
// 128 x 256 and 128 x 192 with stream-K (_sk): the large tiles' own stages and epilogue, the
// last wave shared out (on a power-capped H100, session 27: 128 x 192's 1-7% faster than it alone
// in 12 of 15 cells, 128 x 256's mostly 0-3% slower; docs/kernels.md).
inline constexpr std::array<WgmmaConfig, 12> kWgmmaConfigs{{{256, 3},
                                                           {256, 4, true},
                                                           {192, 4},
                                                           {128, 6},
                                                           {256, 3, false, 2},
                                                           {128, 6, false, 2},
                                                           {128, 7, true, 1, 4},
                                                           {128, 7, true, 1, 2},
                                                           {128, 7, true, 1, 3},
                                                           {64, 9, true, 1, 2},
                                                           {256, 3, false, 1, 1, true},
                                                           {192, 4, false, 1, 1, true}}};

// The forward's tiles for C [M, N] at configuration w: kBM rows of M by w.bn columns of N.
constexpr std::int64_t wgmma_tiles(const WgmmaConfig& w, std::int64_t m, std::int64_t n) {
  return ((m + WgmmaConfig::kBM - 1) / WgmmaConfig::kBM) * ((n + w.bn - 1) / w.bn);
}

// Stream-K (WgmmaConfig::streamk) on a persistent grid of `grid` blocks: `tiles` output tiles of
// k_tiles steps of K each. Where the tiles do not fill whole waves, the last partial wave's tiles
// are the stream-K tiles: their k-steps, tile by tile, are cut into `grid` equal ranges, one a
// block, so every block ends at the same time instead of a partial wave running alone (2048
// tiles on 132: 15 whole waves and 68 tiles cut into 132 ranges of 33 of 64 k-steps, against 16
// waves). The tiles before them are data-parallel, block b taking tiles b, b + grid, ...
// Only the last wave, since its tiles are what a wave holds in L2 at once: session 26 also cut
// the whole wave before it, and blocks working on 248 tiles at unrelated k-steps read 2.1 times
// the DRAM bytes of the tiles alone (ncu, an H100 at 4096^3, 128 x 256; docs/kernels.md).
// A range then covers part of a tile: a tile is cut into pieces held by consecutive blocks, each
// piece the first or the last unit of its block's range. Block b + j, holding a piece after the
// start, writes its float32 partial tile to its slot and sets its flag; the block holding the
// start waits for each flag and adds the partials in block order to its own accumulators before
// its epilogue, so that every element is summed in the same order every run (no atomics).
// Where the last wave is under a quarter of the grid (or its k-steps fewer than the blocks), a
// range would be under a quarter of a tile (or empty), the start's block adding 4 or more
// partials: there the whole wave before it is cut too, every range at least a tile long.
// Plain constexpr (the kernel calls them, --expt-relaxed-constexpr): the CPU tests walk the same
// schedule.
constexpr int stream_k_tiles(long long tiles, int grid, int k_tiles) {
  if (grid < 1 || tiles <= grid || tiles % grid == 0) return 0;
  const long long last = tiles % grid;
  const bool last_alone = 4 * last >= grid && last * k_tiles >= grid;
  return static_cast<int>(last_alone ? last : last + grid);
}
// A block's unit of work: k-steps [kt_begin, kt_end) of tile `tile` (in grouped order). A stream-K
// unit with kt_begin > 0 is a partial for the block before; one that starts at 0 and ends before
// k_tiles adds the partials of the `partials` blocks after this one.
struct WorkUnit {
  int tile, kt_begin, kt_end;
  int partials = 0;
};
// Calls visit(WorkUnit) for each of block b's units in order: its data-parallel tiles, then its
// stream-K range.
template <class Visit>
constexpr void stream_k_walk(int b, int grid, int tiles, int k_tiles, Visit&& visit) {
  const int sk_tiles = stream_k_tiles(tiles, grid, k_tiles), dp_tiles = tiles - sk_tiles;
  for (int t = b; t < dp_tiles; t += grid) visit(WorkUnit{t, 0, k_tiles});
  const long long steps = static_cast<long long>(sk_tiles) * k_tiles;
  const auto range_start = [&](int block) { return steps * block / grid; };
  long long at = range_start(b);
  const long long end = range_start(b + 1);
  while (at < end) {
    const int t = static_cast<int>(at / k_tiles), first = static_cast<int>(at - static_cast<long long>(t) * k_tiles);
    const int last = end - at < k_tiles - first ? first + static_cast<int>(end - at) : k_tiles;
    int partials = 0;  // the blocks after b whose ranges start inside tile t
    if (first == 0 && last < k_tiles)
      while (b + partials + 1 < grid && range_start(b + partials + 1) < (t + 1LL) * k_tiles) ++partials;
    visit(WorkUnit{dp_tiles + t, first, last, partials});
    at += last - first;
  }
}

// The cluster split-K's sum (WgmmaConfig::ksplit = S > 1), shared out: block r of the cluster
// sums rows [r kBM / S, (r + 1) kBM / S) of the kBM x bn tile (42, 43 and 43 at S = 3), as float4
// chunks, bn / 4 a row, row by row; consumer thread t of `threads` takes chunks t, t + threads,
// ..., at most cluster_split_chunks of them, the last ones possibly past the block's rows (not
// valid: neither read nor stored). Plain constexpr: the kernel uses them (--expt-relaxed-constexpr)
// and a CPU test checks that the blocks' valid chunks cover the tile once.
struct ClusterSplitChunk {
  int row, col;  // within the tile; col a multiple of 4
  bool valid;
};
constexpr int cluster_split_row_begin(int ksplit, int rank) {
  // The first form where S divides the rows: a multiply, where the second is a signed division.
  return WgmmaConfig::kBM % ksplit == 0 ? rank * (WgmmaConfig::kBM / ksplit) : rank * WgmmaConfig::kBM / ksplit;
}
constexpr int cluster_split_chunks(int ksplit, int bn, int threads) {
  const int most_rows = (WgmmaConfig::kBM + ksplit - 1) / ksplit;
  return (most_rows * bn / 4 + threads - 1) / threads;
}
constexpr ClusterSplitChunk cluster_split_chunk(int ksplit, int bn, int threads, int rank, int thread, int i) {
  const int idx = thread + i * threads, row_begin = cluster_split_row_begin(ksplit, rank);
  const int chunks = (cluster_split_row_begin(ksplit, rank + 1) - row_begin) * (bn / 4);
  return {row_begin + idx / (bn / 4), 4 * (idx % (bn / 4)), idx < chunks};
}

// The swapped product's configuration (`wgmma_swap`, decode shapes: launch_wgmma_swap computes
// C^T = B^T . A^T, so a tile is 128 rows of N by bn columns of M). At M = 1 to 16 a 128 x bn
// tile of the forward does 128 / M times the wgmma work needed; swapped, N fills wgmma's 64
// rows and M its N, and 64 is wgmma's narrowest N here (B's panels are 64 wide): m64n64k16 is
// half m64n128k16's tensor time for the same 16 KiB of B a stage. 8 stages of (128 + 64) x 128
// bytes (192 KiB) keep 128 KiB of B in flight a multiprocessor; `direct`, since it writes float32
// partials from registers and needs no C tile in shared memory.
inline constexpr WgmmaConfig kWgmmaSwapConfig{64, 8, true};
// Up to M = 16 (kSwapNarrowMaxM), tiles of 16 columns of M: a stage is B's 16 KiB and 2 KiB of A
// (not 8 KiB of rows of A that are zeros past M), so 12 stages fit and 192 KiB of B are in flight
// a multiprocessor. At 1x14336x4096 the 8-stage tile read HBM at 3.08 TB/s with its warps waiting
// on the stages, where cuBLAS's kernel (nvjet 128x8, 12 stages, 112 blocks as here) read 3.9
// (ncu, session 19's call 3): the bytes in flight, not the grid, set a decode step's rate.
inline constexpr WgmmaConfig kWgmmaSwapNarrowConfig{16, 12, true};
inline constexpr int kSwapNarrowMaxM = 16;
// The swapped product's configuration for M.
constexpr WgmmaConfig wgmma_swap_config(std::int64_t m) {
  return m <= kSwapNarrowMaxM ? kWgmmaSwapNarrowConfig : kWgmmaSwapConfig;
}
// The swapped product's tiles for C [M, N] at configuration w: 128 rows of N by w.bn columns of
// M. Cut into splits, each keeps a done-counter (its last unit sums the partials).
constexpr std::int64_t wgmma_swap_tiles(const WgmmaConfig& w, std::int64_t m, std::int64_t n) {
  return ((n + WgmmaConfig::kBM - 1) / WgmmaConfig::kBM) * ((m + w.bn - 1) / w.bn);
}

// The Hopper kernel for float32 through tf32 (`wgmma_tf32_<name>` variants; the first is
// `tf32`'s on sm_90). A stage is as many bytes as the 16-bit kernel's (32 floats of K instead of
// 64 halves) and takes as long at tf32's half rate, so the same pipelines apply; but C's float32
// tile is twice the bytes: 128 x 256 of it does not fit beside the stages, and stores from
// registers. Operands are K-major only in tf32 (no transposed wgmma), so B is first transposed
// into the variant's workspace.
inline constexpr std::array<WgmmaConfig, 3> kWgmmaTf32Configs{{{128, 5}, {256, 4, true}, {192, 3}}};

}  // namespace kbench::gemm
