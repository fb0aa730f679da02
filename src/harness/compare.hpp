// An output against the oracle, element by element: the verdict and the figures a check
// records (harness/prepare.cpp). Split across the CPU's cores, with the serial scan's answer.
#pragma once

#include <cstdint>
#include <vector>

#include "registry/registry.hpp"

namespace kbench {

// One element: NaN expected means NaN required, an infinity the same infinity; otherwise
// |got - ref| <= atol + rtol |ref| (false for a NaN got).
struct Element {
  bool ok = false;
  bool finite = false;  // the oracle's value is finite: err and allowed mean something
  double err = 0, allowed = 0;
  double ratio() const;  // err / allowed (infinity when nothing is allowed and err > 0)
};

Element compare_element(const std::vector<double>& got, const std::vector<double>& ref,
                        const Tolerance& tol, std::int64_t at);

// What a serial scan in index order finds: the first failing element (bad; -1 if none) and,
// before it, the passing finite element with the largest ratio (worst_at; the first of
// equals; -1 if none).
struct Scan {
  std::int64_t bad = -1;
  std::int64_t worst_at = -1;
  double worst_ratio = -1;
};

Scan compare_output(const std::vector<double>& got, const std::vector<double>& ref,
                    const Tolerance& tol);

}  // namespace kbench
