// The autotuner of the `auto` variant: one tile configuration per (device, dtype, bucket),
// where a bucket is the power-of-two ceiling of M, of N and of K. The first case of a bucket
// times every configuration on its own buffers (outside any timed region: the harness's first
// launch is the check; cold, gemm_family.cpp's time_config) and the fastest is kept in memory for
// the process's life; later cases of the bucket reuse it. Host code without CUDA calls: the timing is passed in, so the
// cache is testable on the CPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "core/dtype.hpp"

namespace kbench::gemm {

// ceil(log2(x)) for x >= 1 (0 for x <= 1): M = 33 and M = 64 fall in bucket 6, M = 65 in 7.
int pow2_bucket(std::int64_t x);

struct TuneKey {
  int device = 0;
  DType dtype = DType::f16;
  std::array<int, 3> bucket{};  // of M, N, K
  auto operator<=>(const TuneKey&) const = default;
};

TuneKey tune_key(int device, DType t, std::int64_t m, std::int64_t n, std::int64_t k);

struct TuneChoice {
  std::size_t config = 0;               // index into kTileConfigs
  std::array<std::int64_t, 3> tuned_on{};  // the case [M, N, K] that timed the candidates
  double best_us = 0;                   // its time there
};

class Autotuner {
 public:
  // The choice for `key`; when there is none yet, time_us(i) is called for every candidate i in
  // [0, candidates) (a negative time: the candidate cannot run) and the fastest is kept.
  TuneChoice choose(const TuneKey& key, std::size_t candidates, const std::array<std::int64_t, 3>& shape,
                    const std::function<double(std::size_t)>& time_us);
  // The choice made for `key`, if any.
  bool find(const TuneKey& key, TuneChoice& out) const;

 private:
  mutable std::mutex mutex_;
  std::map<TuneKey, TuneChoice> choices_;
};

// The process's tuner, used by the `auto` variant.
Autotuner& gemm_autotuner();

// How many cold launches time each candidate (their median is its time): 3 unless set. The GPU
// tests set 1 under compute-sanitizer, where the choice is not what is being checked and every
// instrumented launch is slow: the tuning of `auto` was most of the launches of the every-variant
// tests there. Each candidate is still launched (warm-up and timed launch) and so analysed.
// Throws std::out_of_range outside [1, kMaxTuningSamples].
inline constexpr int kMaxTuningSamples = 15;
void set_tuning_samples(int samples);
int tuning_samples();

}  // namespace kbench::gemm
