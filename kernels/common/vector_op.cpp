#include "kernels/common/vector_op.hpp"

#include "kernels/common/input_kinds.hpp"

namespace kbench {

Op make_vector_op(const char* name, const char* summary, const char* folder, std::vector<const char*> inputs,
                  const char* output) {
  Op op;
  op.name = name;
  op.summary = summary;
  op.shape_rank = 1;
  op.sources = {folder, "kernels/common/"};
  op.inputs = [inputs](const Case& c) {
    std::vector<TensorDesc> out;
    for (const char* n : inputs) out.push_back(vector_tensor(c, n));
    return out;
  };
  op.outputs = [output](const Case& c) { return std::vector<TensorDesc>{vector_tensor(c, output)}; };
  op.generate = [](const Case&, std::vector<HostTensor>& in, Rng& rng) {
    for (auto& t : in) fill_uniform(t, rng, -1.0, 1.0);
  };
  op.flops = [](const Case&) { return 0.0; };
  return op;
}

}  // namespace kbench
