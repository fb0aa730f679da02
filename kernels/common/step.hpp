// A training step: a registered forward op, then its registered backward op on the forward's
// outputs, as one op (what a training step costs a framework that runs these kernels). The
// step owns no kernels and no math: its variants call the parts' registered variants on one
// stream, its oracle is the parts' oracles composed in FP64, its bytes and flops their sums.
// What a step op writes itself: how its tensors wire to the parts', its inputs' generator and
// its tolerances (derived from the parts').
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "registry/registry.hpp"

namespace kbench {

// Where a part's tensor lives among the step's: a step input, or a step output (the forward's
// outputs are step outputs; the backward reads them from there).
struct StepSlot {
  enum Kind { input, output } kind;
  std::size_t index;
};

// The parts' tensors, in the order each part declares them, as slots of the step's; depends on
// the case where a part's tensor list does (rmsnorm_backward's dh and dw).
struct StepWiring {
  std::vector<StepSlot> forward_inputs;
  std::vector<std::size_t> forward_outputs;  // step output index of each forward output
  std::vector<StepSlot> backward_inputs;
  std::vector<std::size_t> backward_outputs;
};

// The two parts, copied from the registry when the step is registered.
struct StepParts {
  Op forward, backward;
};

// One variant of a step: the forward's variant `forward`, then the backward's `backward`.
struct StepVariant {
  std::string name;
  bool baseline = false;
  std::string summary;
  std::string forward, backward;  // registered variant names of the parts
  // The backward's first kernel launched overlapping the forward's last (LaunchArgs::
  // overlap_previous): the launch gap between the parts, taken out where the backward honours it.
  bool overlap = false;
};

struct StepDefinition {
  std::string name, summary;
  std::string forward, backward;  // registered op names
  std::function<StepWiring(const Case&)> wiring;
  std::function<void(const Case&, std::vector<HostTensor>& inputs, Rng&)> generate;
  std::function<Tolerance(const StepParts&, const Case&, std::size_t output)> tolerance;
  // Empty: `auto` (each part's automatic plan, overlapping), its control `auto_serial` (the
  // same, the backward launched after the forward ends) and the baseline `eager` (each part's
  // eager baseline), the row steps' three.
  std::vector<StepVariant> variants = {};
};

// The case of `part` inside the step's case: the same dtype, shape and row stride, and the
// step's values of the parameters the part declares.
Case part_case(const Op& part, const Case& step);

// Adds the step op and its variants (StepDefinition::variants). The parts and their variants
// must be registered first.
void register_step(Registry& r, const StepDefinition& def);

}  // namespace kbench
