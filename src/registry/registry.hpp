// The kernel registry: the catalogue of ops and their variants. An Op is a Problem (what is
// computed, harness/problem.hpp) with a summary and a shape rank; a Variant is a Launchable
// (one way to compute it) with the op it belongs to, a summary and the cases it supports.
//
// The registry holds only these types and their lookup. Which families exist is the kernels'
// business (kernels/all_ops.cpp); registration builds tables and never touches the GPU.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/problem.hpp"

namespace kbench {

// A parameter an op takes beyond dtype and shape (Case::params).
struct OpParam {
  std::string name;
  double fallback = 0;  // what a case gets when nothing sets it
  double lo = 0, hi = 0;  // the accepted range, inclusive
  std::string what;     // one line for --help and errors
};

struct Op : Problem {
  std::string summary;
  std::size_t shape_rank = 1;  // 1: [n]; 2: [rows, cols]; 3: [M, N, K]
  std::vector<OpParam> params;
};

// The case of `op` at `dtype` and `shape`, every parameter of the op at its fallback unless
// `given` sets it. UsageError (one line) for a shape of the wrong rank, a parameter the op
// does not take, or a value outside its range.
Case make_case(const Op& op, DType dtype, const Shape& shape, const std::map<std::string, double>& given = {});

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
