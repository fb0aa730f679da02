// Pushing values into another block's shared memory in the same cluster (sm_90): each store
// (st.async) counts its bytes on an mbarrier in the receiving block, and the receiver waits for
// the bytes it expects. Unlike a cluster barrier around remote reads, the sender waits for
// nothing: no fence that drains its global stores (a cluster-scope release is a GPU-wide
// MEMBAR in SASS), no wait for the slowest block of the cluster except by the one that needs
// its values. Device code for sm_90 and later; callers compile it under __CUDA_ARCH__ >= 900.
#pragma once

#include <cstdint>

namespace kbench::cluster_push {

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// The receiving side, before any block of the cluster may push: an mbarrier of one arrival,
// initialised and made visible to the cluster. The caller then syncs the cluster once (every
// block's mbarrier exists before anything is pushed at it) and calls expect().
__device__ __forceinline__ void init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n"
               "fence.mbarrier_init.release.cluster;\n" ::"r"(shared_address(bar))
               : "memory");
}

// The one arrival, announcing the bytes the other blocks (and this one) will push in this phase;
// the phase completes when they have all landed. One thread calls it, once per phase.
__device__ __forceinline__ void expect(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}

// 16 bytes into block `rank`'s shared memory at the offset of `dst` in this block's, counted
// on the mbarrier at the offset of `bar`. dst is 16-byte aligned.
__device__ __forceinline__ void push(const float4& v, const void* dst, std::uint64_t* bar, std::uint32_t rank) {
  std::uint32_t remote_dst = 0, remote_bar = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote_dst) : "r"(shared_address(dst)), "r"(rank));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote_bar) : "r"(shared_address(bar)), "r"(rank));
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(
                   remote_dst),
               "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(remote_bar)
               : "memory");
}

// Returns once the phase of parity `parity` has completed: every byte expected has landed and is
// visible to this thread (acquire at cluster scope, where the pushes came from).
__device__ __forceinline__ void wait(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

}  // namespace kbench::cluster_push
