#include "core/host_memory.hpp"

#include <malloc.h>

namespace kbench {

void keep_freed_host_memory() {
  mallopt(M_MMAP_MAX, 0);         // no block of its own mapping: every block from the heap
  mallopt(M_TRIM_THRESHOLD, -1);  // and the heap's free top kept, not given back
}

}  // namespace kbench
