// xoshiro256+ seeded through splitmix64: fast enough to fill 2^28-element inputs on the host
// in well under a second per array, and reproducible from a recorded seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace kbench {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : state_) s = splitmix64(seed);
  }
  std::uint64_t next_u64() {
    const std::uint64_t result = state_[0] + state_[3];
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = (state_[3] << 45) | (state_[3] >> 19);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) { return n ? next_u64() % n : 0; }
  // Fisher-Yates with this generator: the same seed gives the same order with any standard
  // library (std::shuffle's use of the generator is implementation-defined).
  template <class Vec>
  void shuffle(Vec& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_[4];
};

}  // namespace kbench
