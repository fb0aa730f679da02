// Every op family of this build, registered explicitly: one line per family, in the order
// `kbench list` shows them. Registration builds tables only; it never touches the GPU.
#include "registry/registry.hpp"

namespace kbench {

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    register_copy(reg);
    register_add(reg);
    register_row_sum(reg);
    register_softmax(reg);
    return reg;
  }();
  return r;
}

}  // namespace kbench
