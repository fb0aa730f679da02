#include "harness/compare.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include "core/parallel.hpp"

namespace kbench {

namespace {

// got_at(k) gives element k of the output. Each piece scans in order, noting its own first
// failure and what came before it; joined in index order, the first piece with a failure holds
// the first failure, and the pieces before it (and its part before the failure) are what the
// serial scan would see. The share is a maximum over every element, so any order gives it.
template <class GotAt>
Scan scan_pieces(GotAt got_at, const std::vector<double>& ref, const Tolerance& tol) {
  struct Piece {
    std::int64_t begin;
    Scan scan;
  };
  std::vector<Piece> pieces;
  std::mutex pieces_mutex;
  parallel_pieces(static_cast<std::int64_t>(ref.size()), kParallelGrain,
                  [&](std::int64_t begin, std::int64_t end) {
    Scan s;
    for (std::int64_t k = begin; k < end; ++k) {
      const Element e = compare_element(got_at(k), ref[static_cast<std::size_t>(k)], tol);
      // share > s.share is false for a NaN share (never: share() gives infinity instead).
      if (e.share() > s.share) s.share = e.share();
      if (s.bad >= 0) continue;  // past the first failure only the share is still wanted
      if (!e.ok) {
        s.bad = k;
        continue;
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
  for (const Piece& p : pieces) all.share = std::max(all.share, p.scan.share);
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

}  // namespace

double Element::ratio() const { return allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0); }

double Element::share() const {
  if (!finite) return ok ? 0.0 : INFINITY;
  return std::isnan(err) ? INFINITY : ratio();  // a NaN got against a finite oracle value
}

Element compare_element(double got, double ref, const Tolerance& tol) {
  if (std::isnan(ref)) return {std::isnan(got), false};
  if (std::isinf(ref)) return {got == ref, false};
  const double err = std::fabs(got - ref);
  const double allowed = tol.atol + tol.rtol * std::fabs(ref);
  return {err <= allowed, true, err, allowed};
}

Scan compare_output(const std::vector<double>& got, const std::vector<double>& ref,
                    const Tolerance& tol) {
  if (got.size() != ref.size()) throw std::logic_error("compare_output: output and oracle sizes differ");
  const double* g = got.data();
  return scan_pieces([g](std::int64_t k) { return g[k]; }, ref, tol);
}

Scan compare_output(DType t, const std::byte* got, const std::vector<double>& ref,
                    const Tolerance& tol) {
  return scan_pieces([t, got](std::int64_t k) { return decode_one(t, got, k); }, ref, tol);
}

}  // namespace kbench
