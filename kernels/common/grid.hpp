// Grid sizing shared by the memory-bound kernels. Host-only; reads the device once.
#pragma once

#include <cstdint>

namespace kbench {

// Blocks for a grid-stride loop over `work_items` items of `threads` threads: enough blocks to
// fill every SM at full occupancy (2048 threads per SM on Hopper), and no more than the work.
unsigned grid_stride_blocks(std::int64_t work_items, int threads);

}  // namespace kbench
