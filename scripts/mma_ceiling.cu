// The ceiling of the legacy tensor-core instruction (mma.sync) on this GPU: warps issuing
// independent mma.sync chains on register operands, with no memory traffic, so that what is
// timed is the instruction's issue rate alone. GEMM I's kernels (kernels/gemm) are built on
// mma.sync; this is the rate they cannot pass, the compute roofline their ratio to cuBLAS (which
// uses wgmma on Hopper) is read against.
//
// Build and run (scripts/gpu_session.sh does, with MMA_CEILING=1):
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a scripts/mma_ceiling.cu -o mma_ceiling && ./mma_ceiling
// Prints one line per instruction and warps per SM: TFLOP/s (2 flops a multiply-add) over the
// median of 5 timed launches, after one untimed launch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_check.cuh"

enum class Kind { f16, bf16, tf32 };

// Independent accumulators per warp: enough that each mma's latency is covered by the others.
constexpr int kChains = 16;

template <Kind K>
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  if constexpr (K == Kind::f16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if constexpr (K == Kind::bf16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <Kind K>
__global__ void chains(std::uint32_t seed, int iterations, float* out) {
  // Small operands (the bit patterns of 1/64-ish values) keep the sums finite.
  std::uint32_t a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = (seed ^ (threadIdx.x * 2654435761u + i)) & 0x23ff23ffu;
  for (int i = 0; i < 2; ++i) b[i] = (seed ^ (threadIdx.x * 40503u + i)) & 0x23ff23ffu;
  float d[kChains][4] = {};
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < kChains; ++c) mma<K>(d[c], a, b);
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps every chain live
}

template <Kind K>
void measure(const char* name, int sms, int warps_per_sm) {
  const int iterations = 4096, threads = 32 * std::min(warps_per_sm, 32), blocks = sms * (warps_per_sm * 32 / threads);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(float) * blocks * threads));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  chains<K><<<blocks, threads>>>(1u, iterations, out);
  CHECK(cudaGetLastError());
  std::vector<float> ms;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(start));
    chains<K><<<blocks, threads>>>(static_cast<std::uint32_t>(r), iterations, out);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  const double k_depth = K == Kind::tf32 ? 8 : 16;
  const double flops = 2.0 * 16 * 8 * k_depth * kChains * iterations * (blocks * threads / 32.0);
  std::printf("mma_ceiling %-5s warps/SM %2d: %7.1f TFLOP/s (median of 5, %.3f ms)\n", name, warps_per_sm,
              flops / (ms[2] * 1e-3) / 1e12, ms[2]);
  CHECK(cudaFree(out));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
}

int main() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("mma_ceiling on %s, %d SMs\n", p.name, p.multiProcessorCount);
  for (int w : {4, 8, 16}) measure<Kind::f16>("f16", p.multiProcessorCount, w);
  for (int w : {4, 8, 16}) measure<Kind::bf16>("bf16", p.multiProcessorCount, w);
  for (int w : {4, 8, 16}) measure<Kind::tf32>("tf32", p.multiProcessorCount, w);
  return 0;
}
