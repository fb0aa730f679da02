#include "harness/compare.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include "core/parallel.hpp"

namespace kbench {

double Element::ratio() const { return allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0); }

Element compare_element(const std::vector<double>& got, const std::vector<double>& ref,
                        const Tolerance& tol, std::int64_t at) {
  const auto k = static_cast<std::size_t>(at);
  if (std::isnan(ref[k])) return {std::isnan(got[k]), false};
  if (std::isinf(ref[k])) return {got[k] == ref[k], false};
  const double err = std::fabs(got[k] - ref[k]);
  const double allowed = tol.atol + tol.rtol * std::fabs(ref[k]);
  return {err <= allowed, true, err, allowed};
}

Scan compare_output(const std::vector<double>& got, const std::vector<double>& ref,
                    const Tolerance& tol) {
  // Each piece scans in order up to its own first failure; joined in index order, the first
  // piece with a failure holds the first failure, and the pieces before it (and its part
  // before the failure) are exactly what the serial scan would have seen.
  struct Piece {
    std::int64_t begin;
    Scan scan;
  };
  if (got.size() != ref.size()) throw std::logic_error("compare_output: output and oracle sizes differ");
  std::vector<Piece> pieces;
  std::mutex pieces_mutex;
  parallel_pieces(static_cast<std::int64_t>(got.size()), kParallelGrain,
                  [&](std::int64_t begin, std::int64_t end) {
    Scan s;
    for (std::int64_t k = begin; k < end; ++k) {
      const Element e = compare_element(got, ref, tol, k);
      if (!e.ok) {
        s.bad = k;
        break;
      }
      if (e.finite && e.ratio() > s.worst_ratio) {
        s.worst_ratio = e.ratio();
        s.worst_at = k;
      }
    }
    const std::lock_guard<std::mutex> lock(pieces_mutex);
    pieces.push_back({begin, s});
  });
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.begin < b.begin; });
  Scan all;
  for (const Piece& p : pieces) {
    if (p.scan.worst_at >= 0 && p.scan.worst_ratio > all.worst_ratio) {
      all.worst_ratio = p.scan.worst_ratio;
      all.worst_at = p.scan.worst_at;
    }
    if (p.scan.bad >= 0) {
      all.bad = p.scan.bad;
      break;
    }
  }
  return all;
}

}  // namespace kbench
