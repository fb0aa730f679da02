#include "kernels/gemm/gemm_autotune.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

namespace kbench::gemm {

int pow2_bucket(std::int64_t x) {
  int b = 0;
  while (b < 62 && (std::int64_t{1} << b) < x) ++b;
  return b;
}

TuneKey tune_key(int device, DType t, std::int64_t m, std::int64_t n, std::int64_t k) {
  return TuneKey{device, t, {pow2_bucket(m), pow2_bucket(n), pow2_bucket(k)}};
}

TuneChoice Autotuner::choose(const TuneKey& key, std::size_t candidates, const std::array<std::int64_t, 3>& shape,
                             const std::function<double(std::size_t)>& time_us) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = choices_.find(key); it != choices_.end()) return it->second;
  TuneChoice best;
  bool any = false;
  for (std::size_t i = 0; i < candidates; ++i) {
    const double us = time_us(i);
    if (us < 0) continue;
    if (!any || us < best.best_us) best = TuneChoice{i, shape, us}, any = true;
  }
  if (!any) throw std::runtime_error("gemm autotuner: no tile configuration could run");
  choices_[key] = best;
  return best;
}

bool Autotuner::find(const TuneKey& key, TuneChoice& out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = choices_.find(key);
  if (it == choices_.end()) return false;
  out = it->second;
  return true;
}

Autotuner& gemm_autotuner() {
  static Autotuner tuner;
  return tuner;
}

namespace {
std::atomic<int> g_tuning_samples{3};
}

void set_tuning_samples(int samples) {
  if (samples < 1 || samples > kMaxTuningSamples)
    throw std::out_of_range("gemm tuning samples must be in [1, " + std::to_string(kMaxTuningSamples) +
                            "], got " + std::to_string(samples));
  g_tuning_samples = samples;
}

int tuning_samples() { return g_tuning_samples; }

}  // namespace kbench::gemm
