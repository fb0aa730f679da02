// Host-side work split across the CPU's cores: the FP64 oracles, dtype conversions and output
// comparisons that prepare every case. Single-threaded, they were most of a sweep's time on the
// H200 machine: a rows sweep spent about 170 of its 176 s before its first timed sample
// (preparing, checking, building timers) and 6 s timing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace kbench {

// Calls fn(begin, end) on contiguous, disjoint pieces that cover [0, n) in order, each piece at
// least `grain` long (one piece, on the calling thread, when n <= grain), at most one piece
// per hardware thread. Each index is handled by exactly one call, so a loop whose iterations
// write only their own elements gives the same result as the serial loop. The first exception
// thrown by a piece is rethrown here after every piece has finished.
template <class F>
void parallel_pieces(std::int64_t n, std::int64_t grain, F&& fn) {
  if (n <= 0) return;
  const std::int64_t cores = std::max<std::int64_t>(1, std::thread::hardware_concurrency());
  const std::int64_t pieces = std::clamp<std::int64_t>(n / std::max<std::int64_t>(grain, 1), 1, cores);
  if (pieces == 1) {
    fn(std::int64_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(pieces));
  const auto run = [&](std::int64_t p) {
    try {
      fn(n * p / pieces, n * (p + 1) / pieces);
    } catch (...) {
      errors[static_cast<std::size_t>(p)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(pieces - 1));
  for (std::int64_t p = 1; p < pieces; ++p) threads.emplace_back(run, p);
  run(0);
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Elements per piece below which splitting costs more than it saves (a thread start is tens
// of microseconds; a million conversions take a few milliseconds).
inline constexpr std::int64_t kParallelGrain = std::int64_t{1} << 16;

}  // namespace kbench
