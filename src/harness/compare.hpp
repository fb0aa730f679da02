// An output against the oracle, element by element: the verdict and the figures a check
// records (harness/prepare.cpp). Split across the CPU's cores, with the serial scan's answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.hpp"
#include "harness/problem.hpp"

namespace kbench {

// One element: NaN expected means NaN required, an infinity the same infinity; otherwise
// |got - ref| <= atol + rtol |ref| (false for a NaN got).
struct Element {
  bool ok = false;
  bool finite = false;  // the oracle's value is finite: err and allowed mean something
  double err = 0, allowed = 0;
  double ratio() const;  // err / allowed (infinity when nothing is allowed and err > 0)
  // The share of its tolerance the element uses: ratio() where the oracle's value is finite,
  // else 0 if it matched and infinity if not (no error can be measured against a NaN or an
  // infinity). Above 1 is a failure.
  double share() const;
};

Element compare_element(double got, double ref, const Tolerance& tol);

// What a serial scan in index order finds: the first failing element (bad; -1 if none) and,
// before it, the passing finite element with the largest ratio (worst_at; the first of
// equals; -1 if none); and, over every element, failing ones included, the largest share of
// the tolerance (share: what the tolerance probe reports; 0 for an empty output).
struct Scan {
  std::int64_t bad = -1;
  std::int64_t worst_at = -1;
  double worst_ratio = -1;
  double share = 0;
};

Scan compare_output(const std::vector<double>& got, const std::vector<double>& ref,
                    const Tolerance& tol);
// The same for ref.size() values of type t at got, read in place (a large output decoded into
// doubles first cost an allocation of 8 bytes per element for every check).
Scan compare_output(DType t, const std::byte* got, const std::vector<double>& ref,
                    const Tolerance& tol);

}  // namespace kbench
