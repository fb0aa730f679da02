// The analysis of `kbench spec`, free of any GPU call so that the CPU tests feed it a made-up
// result. Per op, dtype, shape, cache mode and timer it sets each build's median beside its
// kernel attributes (extra.spec.kernels: registers, local bytes, shared bytes, blocks per SM)
// and compares builds by the per-visit ratio of medians (the builds of a case run back to back
// in every visit; core/stats.hpp's paired_ratio, with its bootstrap interval):
//   template_vecs  against runtime         what a fixed vector count (a register array) gives
//   template_width against runtime         what fixing every size gives
//   template_width against template_vecs   what knowing the width adds to today's kernels
// A build pays where it is at least `threshold` faster and the interval lies above 1; it
// costs where it is that much slower and the interval lies below 1; otherwise the two are even.
// Each op's statement lists where each comparison pays or costs, with the attributes that
// differ there (or says that none do).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "record/result.hpp"

namespace kbench {

// records: the result's; kernels: extra.spec.kernels (an array, possibly empty).
nlohmann::json analyse_spec(const std::vector<Record>& records, const nlohmann::json& kernels, double threshold);

// The same over a result (what the experiment's analyse adds as extra.spec.analysis).
nlohmann::json analyse_spec_result(const Result& r, double threshold);

}  // namespace kbench
