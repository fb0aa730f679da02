// Fillers the ops' generators share for the input kinds of harness/problem.hpp: uniform values,
// rows of one repeated value, and rows of pairs that nearly cancel. Which kinds an op draws,
// and at what magnitudes, stays in its own *_op.cpp.
#pragma once

#include "harness/problem.hpp"

namespace kbench {

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
