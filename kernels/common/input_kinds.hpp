// Fillers the ops' generators share for the input kinds of harness/problem.hpp: uniform values,
// rows of one repeated value, and rows of pairs that nearly cancel. Which kinds an op draws,
// and at what magnitudes, stays in its own *_op.cpp.
//
// Every filler fills in parallel. It takes one draw from the case's generator and seeds from it
// one generator per fixed block of elements (fill_drawn) or per row (each_row_drawn), so the
// values depend on the case's seed alone, never on how many cores share the work. A grid of
// 2.5e9 input elements drawn one at a time from one generator took a core for most of a
// minute per input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "harness/problem.hpp"

namespace kbench {

// Elements per generator in fill_drawn: long enough that seeding one (four splitmix64 steps)
// costs nothing against the block, short enough that a 1-row, 2^20-wide input still spreads
// over 16 cores.
inline constexpr std::int64_t kDrawBlock = std::int64_t{1} << 16;

// The generator of block (or row) `index` of a fill whose draw from the case's generator was
// `base`. The odd multiplier keeps the seeds of different indices distinct; Rng's splitmix64
// seeding makes their streams unrelated.
inline Rng block_rng(std::uint64_t base, std::uint64_t index) {
  return Rng(base ^ (0xd1b54a32d192ed03ULL * (index + 1)));
}

// values[k] = draw(k, g) for every k, where g is block_rng(base, k / kDrawBlock) advanced by
// the block's earlier elements and base is one draw from rng. Blocks run in parallel: draw may
// read anything but must write nothing shared.
template <class Draw>
void fill_drawn(std::vector<double>& values, Rng& rng, Draw&& draw) {
  const std::uint64_t base = rng.next_u64();
  const auto n = static_cast<std::int64_t>(values.size());
  double* const v = values.data();
  parallel_pieces((n + kDrawBlock - 1) / kDrawBlock, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t b = first; b < last; ++b) {
      Rng g = block_rng(base, static_cast<std::uint64_t>(b));
      const std::int64_t end = std::min(n, (b + 1) * kDrawBlock);
      for (std::int64_t k = b * kDrawBlock; k < end; ++k) v[k] = draw(k, g);
    }
  });
}

// fn(r, g) for every row r in [0, rows), g = block_rng(base, r) with base one draw from rng.
// Rows run in parallel (at least kParallelGrain elements of `cols` a piece): fn may write only
// row r.
template <class Fn>
void each_row_drawn(std::int64_t rows, std::int64_t cols, Rng& rng, Fn&& fn) {
  const std::uint64_t base = rng.next_u64();
  const std::int64_t grain = std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(cols, 1));
  parallel_pieces(rows, grain, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      Rng g = block_rng(base, static_cast<std::uint64_t>(r));
      fn(r, g);
    }
  });
}

// Every element uniform in [lo, hi).
void fill_uniform(HostTensor& t, Rng& rng, double lo, double hi);

// Each row one value, uniform in [lo, hi) and drawn per row.
void fill_constant_rows(HostTensor& t, Rng& rng, double lo, double hi);

// Each row made of pairs x, -x + e (x uniform in [-scale, scale), e uniform in [-noise, noise)),
// the pairs' places shuffled across the row so that its partial sums wander as a random row's
// do; an odd row's last element is a lone e. A row then sums to about sqrt(cols / 2) noise,
// and 16-bit rounding of -x + e moves that by at most half an ulp of scale per pair.
void fill_cancelling_rows(HostTensor& t, Rng& rng, double scale, double noise);

// Every element uniform in [lo, hi), then in each row one element, at a random place, `spike`.
void add_spike_per_row(HostTensor& t, Rng& rng, double lo, double hi, double spike);

}  // namespace kbench
