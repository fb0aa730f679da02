// Negative controls for scripts/sanitize.sh: one kernel per compute-sanitizer tool, each with
// the one fault that tool exists to catch. A tool that reports nothing here would report nothing
// in kbench's kernels either, so a clean run of the suite means something only beside these.
// Not a test of kbench and not in any ctest label: every fault is silent without the sanitizer
// (the program exits 0), which is why each needs the tool to be seen.
//   kbench_sanitizer_controls memcheck|racecheck|initcheck|synccheck
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

namespace {

constexpr int kThreads = 64;  // two warps: the faults below cross warps, where they are hazards

// memcheck: an off-by-one bound writes one element past the end of its allocation. Given the
// last allocation, so that no other one lies right after it: one past `a` memcheck saw nothing
// on the H200 (session 13), most likely because `b` was allocated right after it.
__global__ void write_past_the_end(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1;  // should be i < n
}

// racecheck: each thread reads a shared slot another warp writes, with no barrier between.
__global__ void shared_memory_race(int* out) {
  __shared__ int slots[kThreads];
  slots[threadIdx.x] = static_cast<int>(threadIdx.x);
  // a __syncthreads() belongs here
  out[threadIdx.x] = slots[(threadIdx.x + 32) % kThreads];
}

// initcheck: reads device memory nothing ever wrote (cudaMalloc without a copy or memset).
__global__ void read_uninitialised(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

// synccheck: a barrier that half the threads of a warp reach. (A barrier that one whole warp
// of two skipped was not flagged on the H200: since Volta a warp that exits counts as arrived.)
__global__ void divergent_barrier(int* out) {
  if (threadIdx.x % 2 == 0) __syncthreads();  // must be reached by every thread of the block
  out[threadIdx.x] = static_cast<int>(threadIdx.x);
}

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "kbench_sanitizer_controls: %s: %s\n", what, cudaGetErrorString(err));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const char* tool = argc == 2 ? argv[1] : "";
  constexpr int n = 256;
  float *a = nullptr, *b = nullptr;
  int* ints = nullptr;
  if (!check(cudaMalloc(&a, n * sizeof(float)), "cudaMalloc") || !check(cudaMalloc(&b, n * sizeof(float)), "cudaMalloc") ||
      !check(cudaMalloc(&ints, kThreads * sizeof(int)), "cudaMalloc"))
    return 1;
  if (std::strcmp(tool, "memcheck") == 0) {
    write_past_the_end<<<2, kThreads>>>(ints, kThreads);
  } else if (std::strcmp(tool, "racecheck") == 0) {
    shared_memory_race<<<1, kThreads>>>(ints);
  } else if (std::strcmp(tool, "initcheck") == 0) {
    read_uninitialised<<<n / kThreads, kThreads>>>(a, b, n);
  } else if (std::strcmp(tool, "synccheck") == 0) {
    divergent_barrier<<<1, kThreads>>>(ints);
  } else {
    std::fprintf(stderr, "usage: kbench_sanitizer_controls memcheck|racecheck|initcheck|synccheck\n");
    return 2;
  }
  const bool ok = check(cudaGetLastError(), "launch") && check(cudaDeviceSynchronize(), "kernel");
  cudaFree(a);
  cudaFree(b);
  cudaFree(ints);
  std::printf("kbench_sanitizer_controls %s: the broken kernel ran\n", tool);
  return ok ? 0 : 1;
}
