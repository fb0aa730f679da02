// copy: y = x, device to device. The roofline every memory-bound result is measured against:
// every sweep times it, so "fraction of copy bandwidth" always refers to the same run.
//
// Bytes: read n + write n elements. The oracle is the input itself; the tolerance is zero.
#include "kernels/common/input_kinds.hpp"
#include "kernels/common/vector_op.hpp"
#include "kernels/copy/copy.hpp"

namespace kbench {

Op make_copy_op() {
  Op op = make_vector_op("copy", "y = x (device-to-device copy): the bandwidth roofline of every sweep",
                         "kernels/copy/", {"x"}, "y");
  // Probe inputs: the whole finite range of the dtype (a copy that goes through float, or
  // rounds, shows at the top), and one repeated value.
  op.input_kinds = {InputKind::random, InputKind::large, InputKind::constant};
  op.generate = [](const Case& c, std::vector<HostTensor>& in, Rng& rng) {
    const double top = dtype_max(c.dtype);
    if (c.input_kind == InputKind::large) fill_uniform(in[0], rng, -top, top);
    else if (c.input_kind == InputKind::constant) fill_constant_rows(in[0], rng, -1.0, 1.0);
    else fill_uniform(in[0], rng, -1.0, 1.0);
  };
  op.oracle = [](const Case&, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{HostTensor{in[0].desc, in[0].values}};
  };
  // A copy moves bits: anything but the exact input is wrong.
  op.tolerance = [](const Case&, std::size_t) { return Tolerance{0, 0, "a copy is exact"}; };
  op.bytes = [](const Case& c) { return 2.0 * c.shape.at(0) * dtype_size(c.dtype); };
  return op;
}

}  // namespace kbench
