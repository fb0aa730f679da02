// gemm on the CPU: the tolerance argument of gemm_op.cpp replayed in float32 arithmetic (the
// 16-bit grid makes float32 sums exact, the float32 allowance covers sequential sums and not a
// lost product, tf32's covers tf32 and float32's does not), the sampled oracle against the
// full one, the autotuner's buckets and cache, and the launch contracts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "kernels/all_ops.hpp"
#include "kernels/gemm/gemm_autotune.hpp"
#include "kernels/gemm/gemm_contract.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_op.hpp"
#include "kernels/gemm/gemm_tiles.hpp"

namespace kbench::gemm {
namespace {

// tf32 keeps 10 mantissa bits: round to nearest (ties away), as cvt.rna does.
float to_tf32(float x) {
  const double scale = std::ldexp(1.0, 10 - std::ilogb(x));
  return x == 0 ? 0.f : static_cast<float>(std::round(static_cast<double>(x) * scale) / scale);
}

struct DotErrors {
  double worst_share = 0;  // max |float - exact| / atol over the dots
  int dropped_caught = 0;  // dots whose last product, dropped, exceeds the allowance
};

// `dots` sums of K products of uniform [-1, 1] float32 inputs, accumulated sequentially with
// fmaf (the order with the largest partial sums), against the exact sum in double.
DotErrors float32_dots(std::int64_t k, int dots, bool tf32_products, const Tolerance& tol, Rng& rng) {
  DotErrors out;
  for (int d = 0; d < dots; ++d) {
    float acc = 0;
    double exact = 0, last = 0;
    for (std::int64_t i = 0; i < k; ++i) {
      const float a = static_cast<float>(rng.uniform(-1, 1)), b = static_cast<float>(rng.uniform(-1, 1));
      exact += static_cast<double>(a) * b;
      acc = tf32_products ? std::fmaf(to_tf32(a), to_tf32(b), acc) : std::fmaf(a, b, acc);
      last = static_cast<double>(a) * b;
    }
    const double allowed = tol.atol + tol.rtol * std::fabs(exact);
    out.worst_share = std::max(out.worst_share, std::fabs(acc - exact) / allowed);
    out.dropped_caught += std::fabs(last) > 2 * allowed;
  }
  return out;
}

TEST(GemmTolerance, Float32SumsStayWellInsideTheAllowance) {
  Rng rng(11);
  for (const std::int64_t k : {64, 1024, 4096, 8192}) {
    const DotErrors e = float32_dots(k, 400, false, gemm_tolerance(DType::f32, k), rng);
    EXPECT_LT(e.worst_share, 0.5) << "K = " << k;
    // A lost product is seen: most of the last products alone exceed twice the allowance.
    EXPECT_GT(e.dropped_caught, 300) << "K = " << k;
  }
}

TEST(GemmTolerance, TheWorstCaseBoundWouldMissALostProduct) {
  // gamma_K sum|a||b| with |a|, |b| <= 1: at K = 4096 about 1.0, four times a typical |ab|.
  const double k = 4096, u = std::ldexp(1.0, -24);
  EXPECT_GT(k * u / (1 - k * u) * k, 0.9);
  EXPECT_LT(gemm_tolerance(DType::f32, 4096).atol, 0.01);
}

TEST(GemmTolerance, Tf32NeedsItsOwnAllowance) {
  Rng rng(12);
  for (const std::int64_t k : {256, 4096}) {
    EXPECT_LT(float32_dots(k, 300, true, tf32_tolerance(k), rng).worst_share, 0.5) << "K = " << k;
    // tf32 products against float32's allowance: far outside it, so the names are not cosmetic.
    EXPECT_GT(float32_dots(k, 300, true, gemm_tolerance(DType::f32, k), rng).worst_share, 2.0) << "K = " << k;
  }
}

TEST(GemmTolerance, GridInputsMakeFloat32SumsExact) {
  Rng rng(13);
  for (const std::int64_t k : {1, 65, 1024, 16383}) {
    const int s = grid_bits(k);
    ASSERT_GE(s, 0);
    const double step = std::ldexp(1.0, -s);
    for (int d = 0; d < 20; ++d) {
      float acc = 0;
      double exact = 0;
      for (std::int64_t i = 0; i < k; ++i) {
        // Mostly large products of one sign, the hardest case for exactness.
        const double a = (d % 2 ? 1.0 : std::floor(rng.uniform(-1, 1) / step) * step);
        const double b = std::floor(rng.uniform(0, 1) / step) * step + (i % 7 == 0 ? step : 0.0);
        exact += a * std::min(b, 1.0);
        acc = std::fmaf(static_cast<float>(a), static_cast<float>(std::min(b, 1.0)), acc);
      }
      ASSERT_EQ(static_cast<double>(acc), exact) << "K = " << k;
    }
  }
  EXPECT_EQ(grid_bits(16383), 5);
  EXPECT_EQ(grid_bits(16384), 4);  // (K + 1) 2^10 > 2^24
  EXPECT_EQ(grid_bits(std::int64_t{1} << 24), -1);
  // Off the grid, float32 sums of 16-bit products are not exact: the grid is what makes them so.
  float acc = 0;
  double exact = 0;
  for (int i = 0; i < 4096; ++i) {
    const float a = half_bits_to_float(float_to_half_bits(static_cast<float>(rng.uniform(-1, 1))));
    exact += static_cast<double>(a) * a;
    acc = std::fmaf(a, a, acc);
  }
  EXPECT_NE(static_cast<double>(acc), exact);
}

TEST(GemmTolerance, A16BitAccumulatorLosesThe2050Case) {
  // 2048 + 1 + 1 in float16 partial sums: 2049 rounds (to even) to 2048, twice.
  float half_acc = 0, float_acc = 0;
  for (const float x : {2048.f, 1.f, 1.f}) {
    half_acc = half_bits_to_float(float_to_half_bits(half_acc + x));
    float_acc += x;
  }
  EXPECT_EQ(half_acc, 2048.f);
  EXPECT_EQ(float_acc, 2050.f);
  const Tolerance t = gemm_tolerance(DType::f16, 3);
  EXPECT_GT(2050.0 - half_acc, t.atol + t.rtol * 2050.0);  // the check fails the 16-bit sum
  EXPECT_EQ(half_bits_to_float(float_to_half_bits(2050.f)), 2050.f);  // and 2050 is a float16
}

TEST(GemmOracle, SampledRowsAreTheFullOraclesRows) {
  const Op& op = registry().op("gemm");
  const Case c = make_case(op, DType::f16, {37, 21, 19});
  std::vector<HostTensor> in;
  for (const auto& d : op.inputs(c)) in.push_back(HostTensor{d, std::vector<double>(static_cast<std::size_t>(d.elements()))});
  Rng rng(5);
  op.generate(c, in, rng);
  const std::vector<HostTensor> full = op.oracle(c, in);
  const std::vector<std::int64_t> rows{0, 3, 17, 36};
  const std::vector<HostTensor> part = op.oracle_rows(c, in, rows);
  ASSERT_EQ(part[0].desc.rows, 4);
  ASSERT_EQ(part[0].values.size(), 4u * 21);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (int j = 0; j < 21; ++j)
      EXPECT_EQ(part[0].values[i * 21 + j], full[0].values[static_cast<std::size_t>(rows[i] * 21 + j)]);
  double direct = 0;  // one element by hand
  for (int k = 0; k < 19; ++k) direct += in[0].values[static_cast<std::size_t>(17 * 19 + k)] * in[1].values[static_cast<std::size_t>(k * 21 + 5)];
  EXPECT_DOUBLE_EQ(part[0].values[2 * 21 + 5], direct);
}

TEST(GemmOracle, LargeCasesCheckASampleOfRows) {
  const Op& op = registry().op("gemm");
  EXPECT_EQ(op.check_sample_rows(make_case(op, DType::f16, {1024, 1024, 1024})), 0);
  EXPECT_EQ(op.check_sample_rows(make_case(op, DType::f16, {8192, 8192, 8192})), 256);
  EXPECT_EQ(op.check_sample_rows(make_case(op, DType::f16, {8192, 14336, 4096})), 256);
  EXPECT_EQ(op.flops(make_case(op, DType::f16, {2, 3, 4})), 48.0);
  EXPECT_EQ(op.bytes(make_case(op, DType::f16, {2, 3, 4})), (8 + 12 + 6) * 2.0);
}

TEST(GemmAutotune, BucketsArePowersOfTwo) {
  EXPECT_EQ(pow2_bucket(33), 6);
  EXPECT_EQ(pow2_bucket(40), 6);
  EXPECT_EQ(pow2_bucket(64), 6);
  EXPECT_EQ(pow2_bucket(65), 7);
  EXPECT_EQ(pow2_bucket(100), 7);
  EXPECT_EQ(pow2_bucket(1), 0);
  EXPECT_TRUE(tune_key(0, DType::f16, 33, 4096, 4096) == tune_key(0, DType::f16, 40, 4096, 4096));
  EXPECT_FALSE(tune_key(0, DType::f16, 33, 4096, 4096) == tune_key(0, DType::f16, 100, 4096, 4096));
  EXPECT_FALSE(tune_key(0, DType::f16, 33, 4096, 4096) == tune_key(1, DType::f16, 33, 4096, 4096));
  EXPECT_FALSE(tune_key(0, DType::f16, 33, 4096, 4096) == tune_key(0, DType::bf16, 33, 4096, 4096));
}

TEST(GemmAutotune, M33AndM40ShareOneTuningAndM100StartsAnother) {
  Autotuner tuner;
  int timed = 0;
  // A made-up timing: configuration 2 is fastest for M <= 64, configuration 7 above.
  const auto timing_for = [&](std::int64_t m) {
    return [&, m](std::size_t i) {
      ++timed;
      return (m <= 64 ? i == 2 : i == 7) ? 1.0 : 5.0 + static_cast<double>(i);
    };
  };
  const TuneChoice first = tuner.choose(tune_key(0, DType::f16, 33, 4096, 4096), kTileConfigs.size(), {33, 4096, 4096}, timing_for(33));
  EXPECT_EQ(timed, static_cast<int>(kTileConfigs.size()));
  EXPECT_EQ(first.config, 2u);
  const TuneChoice again = tuner.choose(tune_key(0, DType::f16, 40, 4096, 4096), kTileConfigs.size(), {40, 4096, 4096}, timing_for(40));
  EXPECT_EQ(timed, static_cast<int>(kTileConfigs.size()));  // no new timing
  EXPECT_EQ(again.config, 2u);
  EXPECT_EQ(again.tuned_on[0], 33);  // the choice names the case that made it
  const TuneChoice other = tuner.choose(tune_key(0, DType::f16, 100, 4096, 4096), kTileConfigs.size(), {100, 4096, 4096}, timing_for(100));
  EXPECT_EQ(timed, 2 * static_cast<int>(kTileConfigs.size()));
  EXPECT_EQ(other.config, 7u);
  // A candidate that cannot run (negative time) is never chosen; none at all is an error.
  EXPECT_EQ(tuner.choose(tune_key(0, DType::f16, 1, 1, 1), 3, {1, 1, 1}, [](std::size_t i) { return i == 0 ? -1.0 : 3.0 - i; }).config, 2u);
  EXPECT_THROW(tuner.choose(tune_key(0, DType::f16, 2, 2, 2), 3, {2, 2, 2}, [](std::size_t) { return -1.0; }), std::runtime_error);
}

TEST(GemmAutotune, TuningSamplesDefaultToThreeAndRefuseOutOfRange) {
  EXPECT_EQ(tuning_samples(), 3);
  set_tuning_samples(1);
  EXPECT_EQ(tuning_samples(), 1);
  EXPECT_THROW(set_tuning_samples(0), std::out_of_range);
  EXPECT_THROW(set_tuning_samples(kMaxTuningSamples + 1), std::out_of_range);
  EXPECT_EQ(tuning_samples(), 1);  // a refused value leaves the last one
  set_tuning_samples(3);
}

TEST(GemmTiles, EightConfigurationsAtLeastUpTo128x256) {
  EXPECT_GE(kTileConfigs.size(), 8u);
  bool big = false;
  for (const TileConfig& t : kTileConfigs) {
    EXPECT_EQ(t.bk * 2 % 128, 0) << t.name();  // A's tile rows are 128-byte swizzle groups
    EXPECT_EQ(t.bn * 2 % 128, 0) << t.name();
    EXPECT_LE(t.smem_bytes(), 227 * 1024) << t.name();  // an H100/H200 block's shared memory
    EXPECT_LE(t.warps(), 8) << t.name();
    big = big || (t.bm * t.bn >= 128 * 256);
  }
  EXPECT_TRUE(big);
}

TEST(GemmTiles, WgmmaConfigurationsFitAndTheirPanelsAreWhole) {
  for (const WgmmaConfig& w : kWgmmaConfigs) {
    EXPECT_EQ(w.bn % 64, 0) << w.name();  // B's panels are 64 wide (one 128-byte swizzle row)
    EXPECT_LE(w.bn, 256) << w.name();     // wgmma's largest N
    EXPECT_LE(w.smem_bytes() + 1024 + 16 * w.stages, 227 * 1024) << w.name();
    if (w.ksplit > 1) {  // the cluster's split-K: its float32 tile (rows padded by 8) within the ring
      EXPECT_GE(w.stages * (WgmmaConfig::kBM + w.bn) * 128, WgmmaConfig::kBM * (w.bn + 8) * 4) << w.name();
      EXPECT_TRUE(w.direct) << w.name();
      EXPECT_EQ(w.cluster, 1) << w.name();
      EXPECT_LE(w.ksplit, 8) << w.name();  // the portable cluster size
    }
  }
  for (const char* name : {"128x128_ks2", "128x128_ks3", "128x128_ks4"}) {
    bool cluster_split = false;
    for (const WgmmaConfig& w : kWgmmaConfigs) cluster_split = cluster_split || w.name() == name;
    EXPECT_TRUE(cluster_split) << name;
  }
  for (const WgmmaConfig& w : kWgmmaTf32Configs) {  // K-major B^T: rows of BN in TMA's box (<= 256)
    EXPECT_EQ(w.bn % 64, 0) << w.name();
    EXPECT_LE(w.bn, 256) << w.name();
    EXPECT_EQ(w.cluster, 1) << w.name();  // pairs multicast N-major B, which tf32 cannot read
    EXPECT_LE(w.smem_bytes(4) + 1024 + 16 * w.stages, 227 * 1024) << w.name();  // C in float32
  }
  // The swapped product's: whole 8-row groups of M's K-major rows (16 for wgmma's N), partials
  // or C from registers (no C tile), no pairs; the narrow one up to M = 16, the wide one beyond.
  for (const WgmmaConfig& swap : {kWgmmaSwapNarrowConfig, kWgmmaSwapConfig}) {
    EXPECT_EQ(swap.bn % 16, 0) << swap.name();
    EXPECT_TRUE(swap.direct) << swap.name();
    EXPECT_EQ(swap.cluster, 1) << swap.name();
    EXPECT_LE(swap.smem_bytes() + 1024 + 16 * swap.stages, 227 * 1024) << swap.name();
  }
  EXPECT_EQ(wgmma_swap_config(1).bn, 16);
  EXPECT_EQ(wgmma_swap_config(16).bn, 16);
  EXPECT_EQ(wgmma_swap_config(17).bn, 64);
}

// The cluster split-K's sum shared out (cluster_split_chunk): over the cluster's blocks, their
// 256 consumer threads and each thread's chunks, the valid chunks cover every float4 of the
// 128 x bn tile exactly once (at 3 blocks the rows split 42, 43, 43), and a block's valid chunks
// are its own rows.
TEST(GemmTiles, ClusterSplitChunksCoverTheTileOnce) {
  constexpr int kThreads = 256;
  int configs = 0;
  for (const WgmmaConfig& w : kWgmmaConfigs) {
    if (w.ksplit == 1) continue;
    ++configs;
    std::vector<int> seen(static_cast<std::size_t>(WgmmaConfig::kBM * w.bn / 4), 0);
    for (int rank = 0; rank < w.ksplit; ++rank)
      for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < cluster_split_chunks(w.ksplit, w.bn, kThreads); ++i) {
          const ClusterSplitChunk c = cluster_split_chunk(w.ksplit, w.bn, kThreads, rank, t, i);
          if (!c.valid) continue;
          ASSERT_GE(c.row, cluster_split_row_begin(w.ksplit, rank)) << w.name();
          ASSERT_LT(c.row, cluster_split_row_begin(w.ksplit, rank + 1)) << w.name();
          ASSERT_EQ(c.col % 4, 0);
          ASSERT_LT(c.col, w.bn);
          ++seen[static_cast<std::size_t>(c.row * w.bn / 4 + c.col / 4)];
        }
    for (std::size_t e = 0; e < seen.size(); ++e) ASSERT_EQ(seen[e], 1) << w.name() << " chunk " << e;
  }
  EXPECT_EQ(configs, 4);  // 128x128 _ks4, _ks2, _ks3; 128x64_ks2
  EXPECT_EQ(cluster_split_chunks(2, 64, kThreads), 4);   // 64 rows of 16 chunks on 256 threads
  EXPECT_EQ(cluster_split_row_begin(3, 1), 42);
  EXPECT_EQ(cluster_split_row_begin(3, 2), 85);
  EXPECT_EQ(cluster_split_chunks(3, 128, kThreads), 6);  // 43 rows of 32 chunks on 256 threads
  EXPECT_EQ(cluster_split_chunks(4, 128, kThreads), 4);
}

// Stream-K's schedule (stream_k_walk, the kernel's own): over every block of the grid, each k-step
// of each tile is done once; a block's units are its data-parallel tiles then its stream-K range,
// which is never empty; the blocks' ranges differ by one k-step at most. A cut tile's pieces are
// held by consecutive blocks in order of K: its start is the last unit of block b, each later
// piece the first stream-K unit of one of blocks b + 1, ..., b + partials (so a block writes one partial at
// most, and the one stream_k_fixup adds are exactly those), at most five pieces where the last
// wave is cut alone; with the wave before, a tile is cut once.
TEST(GemmTiles, StreamKWalkCoversEveryStepOnceAndJoinsEachCutTile) {
  int cut_tiles = 0, many_pieces = 0;
  for (const int grid : {1, 3, 7, 132})
    for (const int tiles : {1, grid - 1, grid, grid + 1, 2 * grid - 1, 2 * grid, 2 * grid + 5, 15 * grid + 68,
                            27 * grid + 20, 3 * grid + grid / 4})
      for (const int k_tiles : {1, 2, 5, 8, 64}) {
        if (tiles < 1) continue;
        const int sk = stream_k_tiles(tiles, grid, k_tiles), launched = std::min(tiles, grid);  // the kernel's grid
        std::vector<int> done(static_cast<std::size_t>(tiles) * k_tiles, 0);
        std::vector<std::vector<WorkUnit>> units(static_cast<std::size_t>(launched));
        long long lo = 1LL << 40, hi = 0;
        for (int b = 0; b < launched; ++b) {
          stream_k_walk(b, launched, tiles, k_tiles, [&](const WorkUnit& w) { units[b].push_back(w); });
          long long sk_steps = 0;
          for (const WorkUnit& w : units[b]) {
            ASSERT_GE(w.kt_begin, 0);
            ASSERT_LT(w.kt_begin, w.kt_end);
            ASSERT_LE(w.kt_end, k_tiles);
            for (int kt = w.kt_begin; kt < w.kt_end; ++kt) ++done[static_cast<std::size_t>(w.tile) * k_tiles + kt];
            if (w.tile >= tiles - sk) {
              sk_steps += w.kt_end - w.kt_begin;
            } else {
              ASSERT_TRUE(w.kt_begin == 0 && w.kt_end == k_tiles && w.partials == 0) << "a data-parallel tile is whole";
            }
          }
          if (sk > 0) lo = std::min(lo, sk_steps), hi = std::max(hi, sk_steps);
        }
        const std::string where = std::to_string(grid) + " " + std::to_string(tiles) + " " + std::to_string(k_tiles);
        for (std::size_t s = 0; s < done.size(); ++s) ASSERT_EQ(done[s], 1) << where;
        if (sk > 0) {
          EXPECT_GE(lo, 1) << where << ": a block with an empty range";
          EXPECT_LE(hi - lo, 1) << where;
        }
        for (int b = 0; b < launched; ++b)
          for (std::size_t i = 0; i < units[b].size(); ++i) {
            const WorkUnit& w = units[b][i];
            if (w.kt_begin > 0) {  // a later piece of a cut tile: b's first stream-K unit
              ASSERT_GT(b, 0) << where;
              ASSERT_TRUE(i == 0 || units[b][i - 1].tile < tiles - sk) << where << ": first of the stream-K range";
              ASSERT_EQ(w.partials, 0) << where;
            } else if (w.kt_end < k_tiles) {  // the start of a cut tile: b's last unit
              ASSERT_EQ(i + 1, units[b].size()) << where;
              ASSERT_GE(w.partials, 1) << where;
              ASSERT_LT(b + w.partials, launched) << where;
              int kt = w.kt_end;
              for (int j = 1; j <= w.partials; ++j) {  // the pieces it adds: the next blocks' first stream-K units, in order of K
                const auto& next = units[b + j];
                const auto found = std::find_if(next.begin(), next.end(), [&](const WorkUnit& u) { return u.tile >= tiles - sk; });
                ASSERT_NE(found, next.end()) << where;
                const WorkUnit& piece = *found;
                ASSERT_EQ(piece.tile, w.tile) << where;
                ASSERT_EQ(piece.kt_begin, kt) << where;
                kt = piece.kt_end;
              }
              ASSERT_EQ(kt, k_tiles) << where << ": the pieces end where K does";
              ++cut_tiles;
              if (sk < grid) {
                EXPECT_LE(w.partials, 4) << where;
                many_pieces += w.partials > 1;
              } else {
                EXPECT_EQ(w.partials, 1) << where;
              }
            } else {
              ASSERT_EQ(w.partials, 0) << where;
            }
          }
      }
  EXPECT_GT(cut_tiles, 100);
  EXPECT_GT(many_pieces, 10);
  EXPECT_EQ(stream_k_tiles(2048, 132, 64), 68);        // 16384x4096 at 128 x 256: 15.5 waves, the last cut
  EXPECT_EQ(stream_k_tiles(512, 132, 64), 116);        // 4096^3: 3.9 waves
  EXPECT_EQ(stream_k_tiles(3584, 132, 64), 20 + 132);  // 8192x14336x4096: 27.2 waves; 20 alone would be 4.8 steps a block
  EXPECT_EQ(stream_k_tiles(200, 132, 64), 68);         // under two waves
  EXPECT_EQ(stream_k_tiles(140, 132, 64), 140);        // under two waves, the last thin: all
  EXPECT_EQ(stream_k_tiles(170, 132, 2), 170);         // 38 tiles of 2 steps: under a step a block
  EXPECT_EQ(stream_k_tiles(264, 132, 64), 0);          // whole waves
  EXPECT_EQ(stream_k_tiles(100, 132, 64), 0);          // under one
}

// Split-K only where the tiles leave most multiprocessors idle, never into ranges under 256.
TEST(GemmTiles, WgmmaSplitsFillTheMultiprocessorsOnlyWhereTilesCannot) {
  EXPECT_EQ(wgmma_splits(8192, 8192, 8192, 256, 132), 1);     // 2048 tiles
  EXPECT_EQ(wgmma_splits(128, 14336, 4096, 128, 132), 1);     // 112 tiles: over half of 132
  EXPECT_EQ(wgmma_splits(1, 4096, 14336, 256, 132), 8);       // 16 tiles, 8 of them a multiprocessor
  EXPECT_EQ(wgmma_splits(1, 4096, 14336, 128, 132), 4);       // 32 tiles
  EXPECT_EQ(wgmma_splits(1, 4096, 512, 256, 132), 2);         // 8 k-tiles: ranges of 4
  EXPECT_EQ(wgmma_splits(1, 4096, 200, 256, 132), 1);         // 4 k-tiles: nothing to cut
  EXPECT_EQ(wgmma_splits(1, 64, 1 << 20, 128, 132), 16);      // the cap
}

// The swapped product's tiles are 128 rows of N by 64 columns of M: split so that tiles x splits
// fill the multiprocessors about once, never into ranges under 256 of K, at most 16.
TEST(GemmTiles, WgmmaSwapSplitsFillTheMultiprocessorsAboutOnce) {
  EXPECT_EQ(wgmma_swap_splits(1, 4096, 4096, 132), 4);      // 32 tiles
  EXPECT_EQ(wgmma_swap_splits(1, 4096, 14336, 132), 4);
  EXPECT_EQ(wgmma_swap_splits(16, 4096, 4096, 132), 4);     // M up to 64 is one column of tiles
  EXPECT_EQ(wgmma_swap_splits(1, 14336, 4096, 132), 1);     // 112 tiles
  EXPECT_EQ(wgmma_swap_splits(128, 4096, 4096, 132), 2);    // 64 tiles: two columns of 32
  EXPECT_EQ(wgmma_swap_splits(128, 14336, 4096, 132), 1);   // 224 tiles: more than a wave already
  EXPECT_EQ(wgmma_swap_splits(65, 4104, 4160, 132), 2);     // 33 x 2 = 66 tiles (N and M ragged)
  EXPECT_EQ(wgmma_swap_splits(1, 4096, 512, 132), 2);       // 8 k-tiles: ranges of 4
  EXPECT_EQ(wgmma_swap_splits(1, 4096, 200, 132), 1);       // 4 k-tiles: nothing to cut
  EXPECT_EQ(wgmma_swap_splits(1, 72, 1 << 20, 132), 16);    // one tile: the cap
  EXPECT_EQ(wgmma_swap_splits(8192, 8192, 8192, 132), 1);   // a large product: never split
}

// Split, the swapped product keeps a done-counter a tile at the end of its workspace, the partials
// before them: it takes as many splits as fit there (a workspace is allocated for the splits it
// wants, auto's for the largest of its candidates), one where fewer than two do, none below a slice.
TEST(GemmTiles, WgmmaSwapSplitsAsFarAsTheWorkspaceHoldsThemAndTheCounters) {
  EXPECT_EQ(wgmma_swap_tiles(kWgmmaSwapNarrowConfig, 1, 4096), 32);
  EXPECT_EQ(wgmma_swap_tiles(kWgmmaSwapConfig, 65, 4104), 66);
  EXPECT_EQ(wgmma_swap_counters_bytes(1, 4096), 32 * sizeof(unsigned));
  EXPECT_EQ(wgmma_swap_counters_bytes(65, 4104), 66 * sizeof(unsigned));
  EXPECT_EQ(wgmma_swap_counters_bytes(16, 4104), 33 * sizeof(unsigned));  // the narrow tile up to M = 16
  const std::size_t slice = 4096 * sizeof(float), counters = 32 * sizeof(unsigned);  // 1 x 4096 x 4096: 4 wanted
  EXPECT_EQ(wgmma_swap_workspace_splits(1, 4096, 4096, 132, 4 * slice + counters), 4);
  EXPECT_EQ(wgmma_swap_workspace_splits(1, 4096, 4096, 132, 16 * slice + counters), 4);  // auto's: more room
  EXPECT_EQ(wgmma_swap_workspace_splits(1, 4096, 4096, 132, 4 * slice), 3);  // the counters take the last slice's room
  EXPECT_EQ(wgmma_swap_workspace_splits(1, 4096, 4096, 132, 2 * slice + counters + 3), 2);
  EXPECT_EQ(wgmma_swap_workspace_splits(1, 4096, 4096, 132, 2 * slice + counters - 4), 1);
  EXPECT_EQ(wgmma_swap_workspace_splits(1, 4096, 4096, 132, slice), 1);
  EXPECT_EQ(wgmma_swap_workspace_splits(1, 4096, 4096, 132, slice - 1), 0);
  EXPECT_EQ(wgmma_swap_workspace_splits(1, 14336, 4096, 132, 4 * 14336 * sizeof(float)), 1);  // 112 tiles: none wanted
}

// The cp.async path takes rows that start on 16 bytes and are whole 16-byte chunks; a single
// row needs no stride, but still whole chunks (gemm 1x1x1 float32 copied 16 bytes from a buffer
// of 4 before this held).
TEST(GemmContract, AlignedRowsAreWholeChunks) {
  alignas(16) static float buffer[64];
  const auto tensor = [](DType t, std::int64_t rows, std::int64_t cols, std::int64_t stride) {
    return DeviceTensor{buffer, t, rows, cols, stride};
  };
  EXPECT_FALSE(rows_aligned16(tensor(DType::f32, 1, 1, 1)));
  EXPECT_TRUE(rows_aligned16(tensor(DType::f32, 1, 4, 1)));   // one row: its stride is never used
  EXPECT_FALSE(rows_aligned16(tensor(DType::f32, 3, 5, 8)));  // aligned starts, part of a chunk
  EXPECT_TRUE(rows_aligned16(tensor(DType::f32, 3, 4, 8)));
  EXPECT_FALSE(rows_aligned16(tensor(DType::f16, 2, 8, 12)));  // 24-byte stride
  EXPECT_TRUE(rows_aligned16(tensor(DType::f16, 2, 8, 16)));
  EXPECT_TRUE(rows_aligned16(tensor(DType::f16, 2, 0, 0)));  // K = 0: nothing is copied
  DeviceTensor offset = tensor(DType::f16, 1, 8, 8);
  offset.data = reinterpret_cast<char*>(buffer) + 2;
  EXPECT_FALSE(rows_aligned16(offset));
}

TEST(GemmTiles, Tf32ConfigurationsFitAndKeepTheSwizzleWidth) {
  EXPECT_FALSE(kTf32Configs.empty());
  for (const TileConfig& t : kTf32Configs) {
    EXPECT_EQ(t.bk * 4, 128) << t.name();  // A's tile row: one 128-byte swizzle group of floats
    EXPECT_EQ(t.bn % 32, 0) << t.name();   // B's float4 loads cover 32 columns a group
    EXPECT_EQ(t.wn % 32, 0) << t.name();
    EXPECT_LE(t.smem_bytes(4), 227 * 1024) << t.name();
    EXPECT_LE(t.warps(), 8) << t.name();
  }
}

// Fake device pointers: the contract is checked before anything touches them.
DeviceTensor view(std::uintptr_t at, DType t, std::int64_t rows, std::int64_t cols, std::int64_t stride = -1) {
  return DeviceTensor{reinterpret_cast<void*>(at), t, rows, cols, stride < 0 ? cols : stride};
}

TEST(GemmContract, RefusesWhatItCannotComputeRight) {
  const DType h = DType::f16;
  const auto a = view(0x10000, h, 64, 32), b = view(0x20000, h, 32, 48), c = view(0x30000, h, 64, 48);
  EXPECT_EQ(gemm_problem(a, b, c), "");
  EXPECT_NE(gemm_problem(a, view(0x20000, h, 31, 48), c).find("inner dimensions differ"), std::string::npos);
  EXPECT_NE(gemm_problem(a, b, view(0x30000, h, 64, 47)).find("C is 64x47"), std::string::npos);
  EXPECT_NE(gemm_problem(view(0x10000, h, 64, 32, 16), b, c).find("rows overlap"), std::string::npos);
  EXPECT_NE(gemm_problem(a, b, view(0x30000, h, 64, 48, 64)).find("contiguous"), std::string::npos);
  EXPECT_NE(gemm_problem(a, b, view(0x10000 + 64, h, 64, 48)).find("overlaps an input"), std::string::npos);
  EXPECT_NE(gemm_problem(a, b, view(0x20000 - 2, h, 64, 48)).find("overlaps an input"), std::string::npos);
  EXPECT_NE(gemm_problem(a, b, view(0x30001, h, 64, 48)).find("aligned"), std::string::npos);
  EXPECT_NE(gemm_problem(a, view(0x20000, DType::bf16, 32, 48), c).find("one dtype"), std::string::npos);
  EXPECT_NE(gemm_problem(view(0x10000, h, 0, 32), b, view(0x30000, h, 0, 48)).find("at least 1"), std::string::npos);
  EXPECT_NE(gemm_problem(view(0x10000, h, std::int64_t{1} << 31, 32), b, c).find("2^31"), std::string::npos);
  // K = 0 is a product of zeros, not an error.
  EXPECT_EQ(gemm_problem(view(0x10000, h, 64, 0), view(0x20000, h, 0, 48), c), "");
  // 2^31 - 2^16 rows and columns in 16 x 64 tiles: more tiles than a grid holds.
  EXPECT_NE(grid_problem(kDimLimit, kDimLimit, 16, 64), "");
  EXPECT_EQ(grid_problem(8192, 8192, 16, 64), "");
  // The launchers refuse before any CUDA call, so this runs without a GPU.
  EXPECT_THROW(launch_mma(0, a, view(0x20000, h, 31, 48), c, nullptr), std::invalid_argument);
  EXPECT_THROW(launch_simt(a, b, view(0x10000, h, 64, 48), nullptr), std::invalid_argument);
  EXPECT_THROW(launch_tf32(0, a, b, c, nullptr), std::invalid_argument);  // float16 into tf32
  EXPECT_THROW(launch_mma(kTileConfigs.size(), a, b, c, nullptr), std::invalid_argument);
}

TEST(GemmContract, CasesOfTheOp) {
  const Op& op = registry().op("gemm");
  EXPECT_EQ(op.shape_rank, 3u);
  EXPECT_THROW(make_case(op, DType::f16, {64, 64}), UsageError);
  for (const Variant* v : registry().variants("gemm")) {
    EXPECT_NE(v->unsupported(Case{"gemm", DType::f16, {0, 64, 64}}), "") << v->name;
    EXPECT_NE(v->unsupported(Case{"gemm", DType::f16, {64, 0, 64}}), "") << v->name;
  }
  // Every dtype has a variant and a baseline; the tf32 ones take float32 alone.
  for (const DType t : kAllDTypes) {
    int ours = 0, baselines = 0;
    for (const Variant* v : registry().variants("gemm"))
      if (v->unsupported(Case{"gemm", t, {64, 64, 64}}).empty()) (v->baseline ? baselines : ours)++;
    EXPECT_GE(ours, 1) << dtype_name(t);
    EXPECT_GE(baselines, 2) << dtype_name(t);
  }
  EXPECT_NE(registry().variant("gemm", "tf32").unsupported(Case{"gemm", DType::f16, {64, 64, 64}}), "");
  EXPECT_TRUE(static_cast<bool>(registry().variant("gemm", "tf32").tolerance));
  EXPECT_TRUE(static_cast<bool>(registry().variant("gemm", "cublas_tf32").tolerance));
  EXPECT_FALSE(static_cast<bool>(registry().variant("gemm", "cublas").tolerance));
}

}  // namespace
}  // namespace kbench::gemm

namespace kbench::gemm {
namespace {

std::vector<HostTensor> drawn_inputs(const Op& op, const Case& c) {
  std::vector<HostTensor> in;
  for (const auto& d : op.inputs(c)) in.push_back(HostTensor{d, std::vector<double>(static_cast<std::size_t>(d.elements()))});
  Rng rng(8);
  op.generate(c, in, rng);
  return in;
}

TEST(GemmBackward, FlagsChooseInputsAndOutputs) {
  const Op& op = registry().op("gemm_backward");
  const Case both = make_case(op, DType::f16, {24, 16, 40});
  EXPECT_EQ(op.inputs(both).size(), 3u);
  EXPECT_EQ(op.outputs(both).size(), 2u);
  const Case only_db = make_case(op, DType::f16, {24, 16, 40}, {{"da", 0}});
  ASSERT_EQ(op.outputs(only_db).size(), 1u);
  EXPECT_EQ(op.outputs(only_db)[0].name, "db");
  EXPECT_EQ(op.inputs(only_db)[1].name, "a");
  EXPECT_EQ(op.flops(only_db), op.flops(both) / 2);
  // dA's inner dimension is N, dB's is M: their float32 allowances differ.
  const Case f = make_case(op, DType::f32, {1000, 10, 40});
  EXPECT_LT(op.tolerance(f, 0).atol, op.tolerance(f, 1).atol);
  for (const Variant* v : registry().variants("gemm_backward"))
    EXPECT_NE(v->unsupported(make_case(op, DType::f16, {24, 16, 40}, {{"da", 0}, {"db", 0}})), "") << v->name;
  EXPECT_NE(registry().variant("gemm_backward", "mma").unsupported(make_case(op, DType::f16, {24, 16, 41})), "");
  EXPECT_EQ(registry().variant("gemm_backward", "mma").unsupported(make_case(op, DType::f16, {23, 16, 40})), "");
}

TEST(GemmBackward, OracleIsTheTransposedProducts) {
  const Op& op = registry().op("gemm_backward");
  const Case c = make_case(op, DType::f32, {6, 5, 4});
  const std::vector<HostTensor> in = drawn_inputs(op, c);  // dC [6, 5], B [4, 5], A [6, 4]
  const std::vector<HostTensor> out = op.oracle(c, in);
  const auto at = [](const HostTensor& t, std::int64_t r, std::int64_t col) { return t.values[static_cast<std::size_t>(r * t.desc.cols + col)]; };
  double da = 0, db = 0;
  for (int n = 0; n < 5; ++n) da += at(in[0], 2, n) * at(in[1], 3, n);  // dA[2][3]
  for (int m = 0; m < 6; ++m) db += at(in[2], m, 1) * at(in[0], m, 4);  // dB[1][4]
  EXPECT_DOUBLE_EQ(at(out[0], 2, 3), da);
  EXPECT_DOUBLE_EQ(at(out[1], 1, 4), db);
  // K = M: both gradients are sampled by rows, and the samples are the full oracle's rows.
  const Case square = make_case(op, DType::f16, {12, 8, 12});
  const std::vector<HostTensor> sq_in = drawn_inputs(op, square);
  const std::vector<HostTensor> full = op.oracle(square, sq_in);
  const std::vector<HostTensor> part = op.oracle_rows(square, sq_in, {1, 7, 11});
  for (std::size_t o = 0; o < 2; ++o) {
    ASSERT_EQ(part[o].desc.rows, 3);
    for (std::int64_t j = 0; j < part[o].desc.cols; ++j) EXPECT_EQ(at(part[o], 1, j), at(full[o], 7, j)) << o;
  }
  // K != M with dB asked: no sampling, dB's oracle is whole.
  EXPECT_EQ(op.check_sample_rows(make_case(op, DType::f16, {8192, 8192, 4096})), 0);
  EXPECT_EQ(op.check_sample_rows(make_case(op, DType::f16, {8192, 8192, 4096}, {{"db", 0}})), 256);
  EXPECT_EQ(op.check_sample_rows(make_case(op, DType::f16, {8192, 8192, 8192})), 256);
}

}  // namespace
}  // namespace kbench::gemm

namespace kbench::gemm {
namespace {

TEST(GemmStep, WiresTheForwardAndTheGradients) {
  const Op& op = registry().op("gemm_step");
  const Case c = make_case(op, DType::f16, {24, 16, 40});
  ASSERT_EQ(op.inputs(c).size(), 3u);  // a, b, dc
  EXPECT_EQ(op.inputs(c)[2].name, "dc");
  ASSERT_EQ(op.outputs(c).size(), 3u);  // c, da, db
  EXPECT_EQ(op.outputs(c)[0].name, "c");
  EXPECT_EQ(op.outputs(make_case(op, DType::f16, {24, 16, 40}, {{"db", 0}})).size(), 2u);
  EXPECT_EQ(op.flops(c), 3 * 2.0 * 24 * 16 * 40);
  // The step's oracle is the parts' oracles: C = A.B, dA = dC.B^T, dB = A^T.dC.
  std::vector<HostTensor> in;
  for (const auto& d : op.inputs(c)) in.push_back(HostTensor{d, std::vector<double>(static_cast<std::size_t>(d.elements()))});
  Rng rng(2);
  op.generate(c, in, rng);
  const std::vector<HostTensor> out = op.oracle(c, in);
  const auto at = [](const HostTensor& t, std::int64_t r, std::int64_t col) { return t.values[static_cast<std::size_t>(r * t.desc.cols + col)]; };
  double cv = 0, da = 0, db = 0;
  for (int k = 0; k < 40; ++k) cv += at(in[0], 5, k) * at(in[1], k, 7);
  for (int n = 0; n < 16; ++n) da += at(in[2], 5, n) * at(in[1], 9, n);
  for (int m = 0; m < 24; ++m) db += at(in[0], m, 9) * at(in[2], m, 7);
  EXPECT_DOUBLE_EQ(at(out[0], 5, 7), cv);
  EXPECT_DOUBLE_EQ(at(out[1], 5, 9), da);
  EXPECT_DOUBLE_EQ(at(out[2], 9, 7), db);
  EXPECT_FALSE(registry().variant("gemm_step", "cublas").unsupported(c).size());
  EXPECT_TRUE(registry().variant("gemm_step", "cublas").baseline);
}

}  // namespace
}  // namespace kbench::gemm
