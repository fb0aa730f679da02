// A barrier across every block of a grid, for persistent grids sized so that all their blocks
// are resident at once (a block that spins here while another waits for an SM would never be
// released, so only such grids may call it).
#pragma once

#include <cstddef>

namespace kbench {

// Bytes of workspace the barrier takes: the arrival count and the generation, a 128-byte line
// apart (the blocks that spin on the generation do not share a line with the arrivals' atomics),
// kept at 256 bytes so that what follows stays aligned for vector accesses.
constexpr std::size_t kGridBarrierBytes = 256;
constexpr int kGenerationWord = 32;  // counters[kGenerationWord]: the generation

// `counters` start with a zero arrival count (the workspace starts zeroed, and the last block to
// arrive sets it back) and any generation. Every thread of every block calls it; the writes of
// all blocks before it are visible to all threads after it. Each block reads the generation
// before it arrives; the last to arrive resets the count and moves the generation on, and the
// others spin until they see it move: one atomic a block. (Sessions 14 to 27's barrier also
// counted the blocks out, one atomic each on one address that every block waited for before it
// went on, so that the last one out could reset both counters; measured against it in session
// 28, this one was level with it or ahead by up to 0.8 us: docs/kernels.md.)
__device__ __forceinline__ void grid_barrier(unsigned* counters, unsigned blocks) {
  __syncthreads();  // the block's writes are done
  if (threadIdx.x == 0) {
    unsigned* const generation = counters + kGenerationWord;
    unsigned seen = 0;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(seen) : "l"(generation) : "memory");
    __threadfence();  // the block's writes visible GPU-wide, and the read above done, before the arrival
    if (atomicAdd(&counters[0], 1u) == blocks - 1) {
      counters[0] = 0;  // every block has arrived: ready for the next barrier or launch
      __threadfence();  // every block's writes, seen through the count, before the release
      asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(generation), "r"(seen + 1) : "memory");
    } else {
      unsigned now = seen;
      do {
        asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(generation) : "memory");
      } while (now == seen);
    }
  }
  __syncthreads();
}

}  // namespace kbench
