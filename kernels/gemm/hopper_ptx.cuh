// Hopper's asynchronous machinery as inline PTX, for the wgmma GEMM (gemm_wgmma.cuh): mbarriers
// (transaction counts and phase parity), TMA tile loads (cp.async.bulk.tensor) completing on an
// mbarrier, wgmma's shared-memory matrix descriptors and its fence/commit/wait, and setmaxnreg.
// sm_90a only: callers compile these under KBENCH_HOPPER_DEVICE_CODE.
#pragma once

#include <cuda.h>

#include <cstdint>

// Device code of the sm_90a target (wgmma and setmaxnreg exist only there); elsewhere the
// kernels compile to a trap and the host never launches them (hopper_gemm_problem says why).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KBENCH_HOPPER_DEVICE_CODE 1
#endif

namespace kbench::gemm::hopper {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// --- mbarriers (8 bytes of shared memory each) ---
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
// Makes the initialisations visible to the async proxy (TMA) before any copy completes on them.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` of transactions still to come in this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// One arrival on the mbarrier at the same offset in CTA `cta` of the cluster (this one included).
// The default semantics (release at CTA scope), as CUTLASS's ClusterBarrier::arrive(cta_id) and
// fast.cu spell it, not .release.cluster: ptxas (13.0, sm_90a) puts MEMBAR.ALL.CTA,
// MEMBAR.ALL.GPU, ERRBAR and CGAERRBAR before a cluster-scope release, and the pairs' consumers
// arrive twice a stage (both blocks' `empty`), so every stage paid two GPU-wide fences: about
// 0.5-0.7 us a stage, which made the _c2 configurations 1.9x (128 x 256) and 3x (128 x 128)
// slower than the same tiles alone. Nothing is published by this arrival: it only says that the
// stage's wgmmas, which wgmma.wait_group has already completed, are done reading it, and the
// TMA that refills the stage is issued after the producer observes the phase.
__device__ __forceinline__ void mbar_arrive_cluster(std::uint32_t bar, std::uint32_t cta) {
  std::uint32_t remote = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(bar), "r"(cta));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}
// This CTA's rank in its cluster, and a barrier of every thread of the cluster (release/acquire).
__device__ __forceinline__ std::uint32_t cluster_rank() {
  std::uint32_t r = 0;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// Returns once the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// --- TMA ---
// The box of `map` at coordinates (c0 innermost, c1) into shared memory at dst, counted against
// bar's transactions. Elements outside the tensor arrive as zeros (the ragged edges of M, N, K).
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int c0,
                                            int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}
// The box of `map` at (c0, c1) from shared memory at src to global memory, in this thread's
// bulk group; elements outside the tensor are not written.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, std::uint32_t src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Until at most N of this thread's bulk groups are still reading shared memory ...
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// ... or still in flight at all.
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// Orders this thread's ordinary shared-memory writes before the async proxy's reads (TMA stores).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// A barrier among `threads` threads (a multiple of 32) under id (1..15; 0 is __syncthreads').
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// The float at p through L2 (ld.global.cg: not the non-coherent L1, so another block's fenced
// stores are seen), or 0 where `load` is false: a predicated load, not a branch, so that a run of
// them is in flight together and p needs no clamping (it is not read when false).
__device__ __forceinline__ float ld_cg_or_zero(const float* p, bool load) {
  float v;
  asm volatile(
      "{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n mov.b32 %0, 0;\n @q ld.global.cg.f32 %0, [%1];\n}\n"
      : "=f"(v)
      : "l"(p), "r"(static_cast<int>(load))
      : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_u32(std::uint32_t addr, std::uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
// x and y as two consecutive elements of T at addr: one 32-bit store of a 16-bit pair, one
// 64-bit store of a float32 pair.
template <class T>
__device__ __forceinline__ void st_shared_pair(std::uint32_t addr, float x, float y) {
  if constexpr (sizeof(T) == 4) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
  } else {
    T pair[2] = {T(x), T(y)};
    st_shared_u32(addr, *reinterpret_cast<std::uint32_t*>(pair));
  }
}
// tma_load_2d into the same offset of every CTA of the cluster in cta_mask, each counting the
// bytes against its own mbarrier at bar's offset.
__device__ __forceinline__ void tma_load_2d_multicast(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar,
                                                      int c0, int c1, std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask)
      : "memory");
}
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// --- wgmma ---
// A shared-memory matrix descriptor for the 128-byte swizzle: start address, leading and stride
// byte offsets (what each means depends on the operand's major order: gemm_wgmma.cuh).
__device__ __forceinline__ std::uint64_t matrix_desc(std::uint32_t addr, std::uint32_t leading, std::uint32_t stride) {
  return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>(leading >> 4) << 16) |
         (static_cast<std::uint64_t>(stride >> 4) << 32) | (std::uint64_t{1} << 62);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed groups of this warpgroup are still in flight.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads of the accumulators above the wait that completes them.
template <int N>
__device__ __forceinline__ void fence_registers(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// --- registers ---
// Hands registers back (producer) or takes them (consumers); every warp of a warpgroup runs it.
template <int N>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace kbench::gemm::hopper
