// Every op family of this build, registered explicitly, one line per family, in the order
// `kbench list` shows them (as CUTLASS's initialize_all does). Each family's register function
// sits beside its kernels; adding a family is adding its folder and one line here.
#include "kernels/all_ops.hpp"

namespace kbench {

void register_copy(Registry& r);
void register_stream(Registry& r);
void register_add(Registry& r);
namespace rows {
void register_row_sum(Registry& r);
void register_softmax(Registry& r);
void register_softmax_backward(Registry& r);
void register_rmsnorm(Registry& r);
void register_rmsnorm_backward(Registry& r);
void register_softmax_step(Registry& r);
void register_rmsnorm_step(Registry& r);
}  // namespace rows
namespace gemm {
void register_gemm(Registry& r);
void register_gemm_backward(Registry& r);
void register_gemm_step(Registry& r);
}  // namespace gemm
void register_test_faults(Registry& r);  // kernels/test_faults/: KBENCH_TEST_FAULTS=1 only

Registry& registry_for_plugins() {
  static Registry r = [] {
    Registry reg;
    register_copy(reg);
    register_stream(reg);
    register_add(reg);
    rows::register_row_sum(reg);
    rows::register_softmax(reg);
    rows::register_softmax_backward(reg);
    rows::register_rmsnorm(reg);
    rows::register_rmsnorm_backward(reg);
    rows::register_softmax_step(reg);  // the training steps compose the ops above: after them
    rows::register_rmsnorm_step(reg);
    gemm::register_gemm(reg);
    gemm::register_gemm_backward(reg);
    gemm::register_gemm_step(reg);
    register_test_faults(reg);
    return reg;
  }();
  return r;
}

const Registry& registry() { return registry_for_plugins(); }

}  // namespace kbench
