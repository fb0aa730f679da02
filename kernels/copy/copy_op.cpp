// copy: y = x, device to device. The roofline every memory-bound result is measured against:
// every sweep times it, so "fraction of copy bandwidth" always refers to the same run.
//
// Bytes: read n + write n elements. The oracle is the input itself; the tolerance is zero.
#include "kernels/common/vector_op.hpp"
#include "kernels/copy/copy.hpp"

namespace kbench {

Op make_copy_op() {
  Op op = make_vector_op("copy", "y = x (device-to-device copy): the bandwidth roofline of every sweep",
                         "kernels/copy/", {"x"}, "y");
  op.oracle = [](const Case&, const std::vector<HostTensor>& in) {
    return std::vector<HostTensor>{HostTensor{in[0].desc, in[0].values}};
  };
  // A copy moves bits: anything but the exact input is wrong.
  op.tolerance = [](const Case&, std::size_t) { return Tolerance{0, 0, "a copy is exact"}; };
  op.bytes = [](const Case& c) { return 2.0 * c.shape.at(0) * dtype_size(c.dtype); };
  return op;
}

}  // namespace kbench
