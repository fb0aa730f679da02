#include "kernels/common/step.hpp"

#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>

namespace kbench {

namespace {

// The backward's workspace starts at this boundary after the forward's: the alignment of a
// device allocation, which a part may rely on for its own workspace.
constexpr std::size_t kWorkspaceAlign = 256;

std::size_t aligned(std::size_t bytes) { return (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign; }

// A part's tensors, picked from the step's (DeviceTensor for a launch, HostTensor for the oracle).
template <class T>
std::vector<T> gather(const std::vector<StepSlot>& slots, std::span<const T> inputs, std::span<const T> outputs) {
  std::vector<T> picked;
  picked.reserve(slots.size());
  for (const StepSlot& s : slots) {
    const std::span<const T> from = s.kind == StepSlot::input ? inputs : outputs;
    if (s.index >= from.size()) throw std::logic_error("step wiring names a tensor the step does not have");
    picked.push_back(from[s.index]);
  }
  return picked;
}

template <class T>
std::vector<T> gather(const std::vector<std::size_t>& indices, std::span<const T> outputs) {
  std::vector<StepSlot> slots;
  for (const std::size_t i : indices) slots.push_back(StepSlot{StepSlot::output, i});
  return gather<T>(slots, {}, outputs);
}

std::size_t output_count(const StepWiring& w) { return w.forward_outputs.size() + w.backward_outputs.size(); }

struct StepTensors {
  std::vector<TensorDesc> inputs, outputs;
};

// The step's tensors as the parts describe them: an input as the first part that reads it (the
// forward's w for rmsnorm_step), an output as the part that writes it. Every step tensor must be
// some part's, and every output written once.
StepTensors step_tensors(const StepParts& p, const StepWiring& w, const Case& c) {
  const std::vector<TensorDesc> fi = p.forward.inputs(part_case(p.forward, c));
  const std::vector<TensorDesc> fo = p.forward.outputs(part_case(p.forward, c));
  const std::vector<TensorDesc> bi = p.backward.inputs(part_case(p.backward, c));
  const std::vector<TensorDesc> bo = p.backward.outputs(part_case(p.backward, c));
  if (fi.size() != w.forward_inputs.size() || fo.size() != w.forward_outputs.size() ||
      bi.size() != w.backward_inputs.size() || bo.size() != w.backward_outputs.size())
    throw std::logic_error(c.op + ": its wiring does not match the parts' tensors");
  StepTensors t;
  std::vector<bool> input_set, output_set(output_count(w), false);
  const auto place_input = [&](const StepSlot& s, const TensorDesc& d) {
    if (s.kind != StepSlot::input) return;
    if (s.index >= t.inputs.size()) t.inputs.resize(s.index + 1), input_set.resize(s.index + 1, false);
    if (!input_set[s.index]) t.inputs[s.index] = d, input_set[s.index] = true;
  };
  for (std::size_t i = 0; i < fi.size(); ++i) place_input(w.forward_inputs[i], fi[i]);
  for (std::size_t i = 0; i < bi.size(); ++i) place_input(w.backward_inputs[i], bi[i]);
  t.outputs.resize(output_set.size());
  const auto place_output = [&](std::size_t index, const TensorDesc& d) {
    if (index >= t.outputs.size() || output_set[index]) throw std::logic_error(c.op + ": an output written twice");
    t.outputs[index] = d, output_set[index] = true;
  };
  for (std::size_t i = 0; i < fo.size(); ++i) place_output(w.forward_outputs[i], fo[i]);
  for (std::size_t i = 0; i < bo.size(); ++i) place_output(w.backward_outputs[i], bo[i]);
  if (std::find(input_set.begin(), input_set.end(), false) != input_set.end())
    throw std::logic_error(c.op + ": an input no part reads");
  return t;
}

template <class T>
void append_missing(std::vector<T>& to, const std::vector<T>& from, auto key) {
  for (const T& x : from)
    if (std::none_of(to.begin(), to.end(), [&](const T& y) { return key(y) == key(x); })) to.push_back(x);
}

Op make_step_op(const StepParts& p, const StepDefinition& def) {
  Op op;
  op.name = def.name;
  op.summary = def.summary;
  op.shape_rank = p.forward.shape_rank;
  op.params = p.forward.params;  // rmsnorm's eps is rmsnorm_backward's too: the step takes it once
  append_missing(op.params, p.backward.params, [](const OpParam& q) { return q.name; });
  op.sources = p.forward.sources;
  append_missing(op.sources, p.backward.sources, [](const std::string& s) { return s; });
  const auto wiring = def.wiring;
  op.inputs = [p, wiring](const Case& c) { return step_tensors(p, wiring(c), c).inputs; };
  op.outputs = [p, wiring](const Case& c) { return step_tensors(p, wiring(c), c).outputs; };
  op.generate = def.generate;
  // The forward's oracle on the step's inputs, then the backward's on the forward's FP64
  // outputs (as the forward's oracle returns them: rmsnorm's h already rounded to the dtype, as
  // stored) and the step's other inputs.
  op.oracle = [p, wiring](const Case& c, const std::vector<HostTensor>& in) {
    const StepWiring w = wiring(c);
    std::vector<HostTensor> out(output_count(w));
    const std::span<const HostTensor> ins(in);
    std::vector<HostTensor> fo =
        p.forward.oracle(part_case(p.forward, c), gather<HostTensor>(w.forward_inputs, ins, out));
    for (std::size_t i = 0; i < fo.size(); ++i) out.at(w.forward_outputs.at(i)) = std::move(fo[i]);
    std::vector<HostTensor> bo =
        p.backward.oracle(part_case(p.backward, c), gather<HostTensor>(w.backward_inputs, ins, out));
    for (std::size_t i = 0; i < bo.size(); ++i) out.at(w.backward_outputs.at(i)) = std::move(bo[i]);
    return out;
  };
  const auto tolerance = def.tolerance;
  op.tolerance = [p, tolerance](const Case& c, std::size_t output) { return tolerance(p, c, output); };
  // The two ops' bytes, summed: the forward's y (h) is written and then read again by the
  // backward, as the pair of kernels a framework runs must move it (one fused step kernel could
  // keep it on chip, and would count fewer). Flops likewise.
  op.bytes = [p](const Case& c) {
    return p.forward.bytes(part_case(p.forward, c)) + p.backward.bytes(part_case(p.backward, c));
  };
  op.flops = [p](const Case& c) {
    return p.forward.flops(part_case(p.forward, c)) + p.backward.flops(part_case(p.backward, c));
  };
  return op;
}

// The step's variant `sv`: the forward's variant `fv`, then the backward's `bv` on the
// forward's outputs, on the launch's stream (overlapping where sv says so); the forward's
// workspace, then the backward's.
Variant step_variant(const StepParts& p, const StepDefinition& def, const StepVariant& sv, const Variant& fv,
                     const Variant& bv) {
  const auto wiring = def.wiring;
  const bool overlap = sv.overlap;
  Variant v = make_variant(def.name, sv.name, sv.summary, [p, wiring, fv, bv, overlap](const LaunchArgs& a) {
    const Case fc = part_case(p.forward, a.c), bc = part_case(p.backward, a.c);
    const StepWiring w = wiring(a.c);
    const std::size_t fw = fv.workspace_bytes(fc), bw = bv.workspace_bytes(bc);
    if ((fw != 0 || bw != 0) && a.workspace == nullptr) throw std::invalid_argument(a.c.op + ": no workspace");
    auto* const workspace = static_cast<std::byte*>(a.workspace);
    const std::vector<DeviceTensor> f_in = gather(w.forward_inputs, a.inputs, a.outputs);
    const std::vector<DeviceTensor> f_out = gather(w.forward_outputs, a.outputs);
    fv.launch(LaunchArgs{fc, f_in, f_out, fw ? workspace : nullptr, a.stream});
    const std::vector<DeviceTensor> b_in = gather(w.backward_inputs, a.inputs, a.outputs);
    const std::vector<DeviceTensor> b_out = gather(w.backward_outputs, a.outputs);
    bv.launch(LaunchArgs{bc, b_in, b_out, bw ? workspace + aligned(fw) : nullptr, a.stream, overlap});
  });
  v.baseline = sv.baseline;
  v.unsupported = [p, fv, bv](const Case& c) {
    if (std::string why = fv.unsupported(part_case(p.forward, c)); !why.empty()) return p.forward.name + ": " + why;
    if (std::string why = bv.unsupported(part_case(p.backward, c)); !why.empty()) return p.backward.name + ": " + why;
    return std::string();
  };
  v.workspace_bytes = [p, fv, bv](const Case& c) {
    const std::size_t bw = bv.workspace_bytes(part_case(p.backward, c));
    return aligned(fv.workspace_bytes(part_case(p.forward, c))) + bw;
  };
  return v;
}

}  // namespace

Case part_case(const Op& part, const Case& step) {
  Case c{part.name, step.dtype, step.shape, step.row_stride, {}};
  c.input_kind = step.input_kind;
  for (const OpParam& q : part.params) {
    const auto it = step.params.find(q.name);
    c.params[q.name] = it == step.params.end() ? q.fallback : it->second;
  }
  return c;
}

void register_step(Registry& r, const StepDefinition& def) {
  const StepParts parts{r.op(def.forward), r.op(def.backward)};
  r.add_op(make_step_op(parts, def));
  std::vector<StepVariant> variants = def.variants;
  if (variants.empty()) {
    variants.push_back({"auto", false,
                        "forward, then backward on its outputs: each its automatic plan, the backward's first kernel "
                        "launched overlapping the forward's last",
                        "auto", "auto", true});
    // Timed beside auto in the same visits: what the overlap is worth.
    variants.push_back({"auto_serial", false, "auto with the backward launched after the forward ends (the control)",
                        "auto", "auto", false});
    variants.push_back({"eager", true, "the forward's eager baseline, then the backward's", "eager", "eager"});
  }
  for (const StepVariant& sv : variants)
    r.add_variant(step_variant(parts, def, sv, r.variant(def.forward, sv.forward), r.variant(def.backward, sv.backward)));
}

}  // namespace kbench
