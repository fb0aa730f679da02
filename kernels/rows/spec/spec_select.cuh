// Which instantiation a spec build runs for a plan, shared by the two ops' spec files. An op
// describes its kernels with a small struct M:
//   M::kRules                              its SpecRules (launch bounds, 8-vector plans)
//   M::Kernel<T>                           the kernels' common signature (a function pointer)
//   M::runtime<T>()                        the runtime build
//   M::fixed<T, K, Aligned, W, L>()        the resident row with K vectors, rows_aligned or not,
//                                          and the width and lanes fixed when W, L > 0
// and select_build returns the kernel with a name for the result. Only the instantiations a
// plan can ask for are made: 8 vectors for float32 where the op's rules allow them, aligned
// rows only for widths of whole vectors.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/common/dispatch.cuh"
#include "kernels/rows/spec/spec_internal.hpp"
#include "kernels/rows/spec/spec_shape.hpp"

namespace kbench::rows::spec {

template <class Fn>
struct Chosen {
  Fn kernel = nullptr;
  std::string name;
};

template <class M, class T>
using KernelOf = typename M::template Kernel<T>;

template <class M, class T, int K, int W, int L>
Chosen<KernelOf<M, T>> aligned_or_not(bool aligned, const std::string& name) {
  if constexpr (W == 0 || W * sizeof(T) % 16 == 0)
    if (aligned) return {M::template fixed<T, K, true, W, L>(), name + " aligned"};
  return {M::template fixed<T, K, false, W, L>(), name + " unaligned"};
}

template <class M, class T>
Chosen<KernelOf<M, T>> vecs_build(const RowPlan& plan, bool aligned) {
  const std::string name = "template_vecs<" + std::to_string(plan.vecs) + ">";
  if (plan.vecs == 4) return aligned_or_not<M, T, 4, 0, 0>(aligned, name);
  if constexpr (M::kRules.eight_vectors_f32 && sizeof(T) == 4)
    if (plan.vecs == 8) return aligned_or_not<M, T, 8, 0, 0>(aligned, name);
  throw std::logic_error("spec: no template_vecs kernel for " + describe(plan));
}

// The width build at W: its vectors and lanes are block_shape's, which must be the plan's.
template <class M, class T, int W>
Chosen<KernelOf<M, T>> width_build_at(const RowPlan& plan, bool aligned) {
  constexpr BlockShape s = block_shape(W, sizeof(T), M::kRules);
  if constexpr (s.vecs == 0) {
    throw std::logic_error("spec: no resident plan holds width " + std::to_string(W));
  } else {
    if (plan.vecs != s.vecs || plan.lanes != s.lanes || plan.threads != s.lanes)
      throw std::logic_error("spec: the width build at " + std::to_string(W) + " was made for vecs=" +
                             std::to_string(s.vecs) + " lanes=" + std::to_string(s.lanes) + ", not " + describe(plan));
    return aligned_or_not<M, T, s.vecs, W, s.lanes>(
        aligned, "template_width<" + std::to_string(W) + "> vecs=" + std::to_string(s.vecs) +
                     " lanes=" + std::to_string(s.lanes));
  }
}

template <class M, class T, std::size_t... I>
Chosen<KernelOf<M, T>> width_build(int width, const RowPlan& plan, bool aligned, std::index_sequence<I...>) {
  Chosen<KernelOf<M, T>> out;
  ((width == kSpecWidths[I] ? (void)(out = width_build_at<M, T, kSpecWidths[I]>(plan, aligned)) : (void)0), ...);
  if (!out.kernel) throw std::logic_error("spec: no template_width kernel for width " + std::to_string(width));
  return out;
}

template <class M, class T>
Chosen<KernelOf<M, T>> select_build(Build b, int width, const RowPlan& plan, bool aligned) {
  if (plan.kind != RowKind::resident || plan.threads != plan.lanes || plan.lanes < 64)
    throw std::logic_error("spec: the builds run block resident plans only, not " + describe(plan));
  switch (b) {
    case Build::runtime: return {M::template runtime<T>(), "runtime"};
    case Build::template_vecs: return vecs_build<M, T>(plan, aligned);
    case Build::template_width:
      return width_build<M, T>(width, plan, aligned, std::make_index_sequence<std::size(kSpecWidths)>{});
  }
  throw std::logic_error("spec: unhandled build");
}

// SpecOp::attributes of an op's kernels: the instantiation its launcher would pick for the case.
template <class M>
KernelAttributes attributes_of(Build b, const Case& c) {
  const RowPlan plan = spec_plan(c);
  KernelAttributes out;
  dispatch_dtype(c.dtype, [&]<class T>() {
    const auto k = select_build<M, T>(b, static_cast<int>(c.shape.at(1)), plan, case_rows_aligned(c));
    out = read_attributes(reinterpret_cast<const void*>(k.kernel), k.name, plan);
  });
  return out;
}

}  // namespace kbench::rows::spec
