// The kernel registry: the catalogue of ops and their variants. An Op is a Problem (what is
// computed, harness/problem.hpp) with a summary and a shape rank; a Variant is a Launchable
// (one way to compute it) with the op it belongs to, a summary and the cases it supports.
//
// The registry holds only these types and their lookup. Which families exist is the kernels'
// business (kernels/all_ops.cpp); registration builds tables and never touches the GPU.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/problem.hpp"

namespace kbench {

struct Op : Problem {
  std::string summary;
  std::size_t shape_rank = 1;  // 1: [n]; 2: [rows, cols]; 3: [M, N, K]
};

struct Variant : Launchable {
  std::string op;
  std::string summary;
  // Empty when the variant supports the case; otherwise why it does not.
  std::function<std::string(const Case&)> unsupported = [](const Case&) { return std::string(); };
};

// A variant of `op` named `name` with its launcher; the other fields keep their defaults.
Variant make_variant(std::string op, std::string name, std::string summary,
                     std::function<void(const LaunchArgs&)> launch);

class Registry {
 public:
  void add_op(Op op);
  void add_variant(Variant v);
  const std::vector<Op>& ops() const { return ops_; }
  // Both throw UsageError naming the known choices.
  const Op& op(std::string_view name) const;
  const Variant& variant(std::string_view op, std::string_view name) const;
  std::vector<const Variant*> variants(std::string_view op) const;

 private:
  std::vector<Op> ops_;
  std::vector<Variant> variants_;
};

}  // namespace kbench
