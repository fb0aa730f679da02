// What the events timer's ~2.8 us floor is made of. Scratch probe, not part of kbench.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void spin(unsigned long long ns, unsigned long long* end) {
  unsigned long long t0 = gt(), t;
  do { t = gt(); } while (t - t0 < ns);
  if (end && threadIdx.x == 0) *end = t;
}
__global__ void empty() {}
__global__ void stamp(unsigned long long* at) { if (threadIdx.x == 0) *at = gt(); }
__global__ void readall(const uint4* b, size_t n, unsigned* sink) {
  unsigned a = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) { uint4 v = b[i]; a ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (a == 0x9e3779b9u) *sink = a;
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static double mn(std::vector<double> v) { return *std::min_element(v.begin(), v.end()); }

int main() {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  unsigned long long* ts; CK(cudaMalloc(&ts, 64));
  size_t fb = 120u << 20; void* buf; CK(cudaMalloc(&buf, fb)); CK(cudaMemset(buf, 0, fb));
  unsigned* sink; CK(cudaMalloc(&sink, 4));
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // warm up: 1 s of spin
  spin<<<sms, 32, 0, s>>>(1000000000ull, nullptr); CK(cudaStreamSynchronize(s));
  const int N = 300;
  auto pre = [&](bool cold) { if (cold) readall<<<sms * 4, 512, 0, s>>>((const uint4*)buf, fb / 16, sink); else spin<<<1, 32, 0, s>>>(50000, ts + 4); };
  auto ev = [&](const char* name, bool cold, auto body) {
    std::vector<double> v;
    for (int i = 0; i < N; ++i) {
      CK(cudaStreamSynchronize(s)); pre(cold);
      CK(cudaEventRecord(a, s)); body(); CK(cudaEventRecord(b, s));
      CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); v.push_back(ms * 1000);
    }
    printf("%-52s median %7.3f us  min %7.3f\n", name, med(v), mn(v));
    return 0;
  };
  for (bool cold : {false, true}) {
    printf("--- queued behind %s\n", cold ? "L2 read-through flush" : "50 us spin");
    ev("E1 E2 (nothing between)", cold, [&] {});
    ev("E1 empty E2", cold, [&] { empty<<<1, 1, 0, s>>>(); });
    ev("E1 empty empty E2", cold, [&] { empty<<<1, 1, 0, s>>>(); empty<<<1, 1, 0, s>>>(); });
    ev("E1 10x empty E2", cold, [&] { for (int k = 0; k < 10; ++k) empty<<<1, 1, 0, s>>>(); });
    ev("E1 empty<<<132x256>>> E2", cold, [&] { empty<<<sms, 256, 0, s>>>(); });
    ev("E1 E1' empty E2 (two start events)", cold, [&] { cudaEventRecord(a, s); empty<<<1, 1, 0, s>>>(); });
  }
  // globaltimer gaps: end of spin -> start of next kernel, with and without an event between
  auto gap = [&](const char* name, int mode) {
    std::vector<double> v;
    for (int i = 0; i < N; ++i) {
      CK(cudaStreamSynchronize(s));
      spin<<<1, 32, 0, s>>>(50000, ts);
      if (mode >= 1) CK(cudaEventRecord(a, s));
      if (mode >= 2) CK(cudaEventRecord(b, s));
      stamp<<<1, 32, 0, s>>>(ts + 1);
      CK(cudaStreamSynchronize(s));
      unsigned long long h[2]; CK(cudaMemcpy(h, ts, 16, cudaMemcpyDeviceToHost));
      v.push_back((double)(h[1] - h[0]) / 1000.0);
    }
    printf("%-52s median %7.3f us  min %7.3f\n", name, med(v), mn(v));
    return 0;
  };
  printf("--- globaltimer: spin's last read -> next kernel's first read\n");
  gap("spin -> stamp", 0);
  gap("spin -> E -> stamp", 1);
  gap("spin -> E -> E -> stamp", 2);
  // kernel end -> stop event: stamp kernel then event; measure E1 stamp E2 vs E1 E2
  printf("--- stamp kernel alone between events\n");
  ev("E1 stamp E2", false, [&] { stamp<<<1, 32, 0, s>>>(ts + 2); });
  return 0;
}
