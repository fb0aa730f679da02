// Every op family of this build, registered explicitly, one line per family, in the order
// `kbench list` shows them (as CUTLASS's initialize_all does). Each family's register function
// sits beside its kernels; adding a family is adding its folder and one line here.
#include "kernels/all_ops.hpp"

namespace kbench {

void register_copy(Registry& r);
void register_add(Registry& r);
void register_row_sum(Registry& r);
void register_softmax(Registry& r);
void register_softmax_backward(Registry& r);
void register_rmsnorm(Registry& r);
void register_rmsnorm_backward(Registry& r);

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    register_copy(reg);
    register_add(reg);
    register_row_sum(reg);
    register_softmax(reg);
    register_softmax_backward(reg);
    register_rmsnorm(reg);
    register_rmsnorm_backward(reg);
    return reg;
  }();
  return r;
}

}  // namespace kbench
