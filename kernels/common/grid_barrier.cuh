// A barrier across every block of a grid, for persistent grids sized so that all their blocks
// are resident at once (a block that spins here while another waits for an SM would never be
// released, so only such grids may call it).
#pragma once

#include <cstddef>

namespace kbench {

// Bytes of workspace the barrier takes: two counters, kept at 16 bytes so that what follows
// stays aligned for vector accesses.
constexpr std::size_t kGridBarrierBytes = 16;

// `counters` (two unsigned) are zero when the grid starts: the workspace starts zeroed, and the
// last block out of the barrier sets both back, so the next launch on the same workspace finds
// them so (the harness's check launches twice on one workspace and compares the bits). Every
// thread of every block calls it; the writes of all blocks before it are visible to all threads
// after it.
__device__ __forceinline__ void grid_barrier(unsigned* counters, unsigned blocks) {
  __syncthreads();  // the block's writes are done
  if (threadIdx.x == 0) {
    __threadfence();  // and visible GPU-wide before the count says so
    atomicAdd(&counters[0], 1u);
    unsigned arrived = 0;
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(arrived) : "l"(counters) : "memory");
    } while (arrived < blocks);
    __threadfence();
    // Every block has left the spin above once the departures reach `blocks`: the last one out
    // may reset both counters.
    if (atomicAdd(&counters[1], 1u) == blocks - 1) {
      counters[0] = 0;
      counters[1] = 0;
    }
  }
  __syncthreads();
}

}  // namespace kbench
