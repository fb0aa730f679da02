// Where a two-kernel split plan's overlap wins and loses, and why the graph timer and cupti
// disagree about it (session 36). kbench's softmax split launches its write kernel overlapping
// its stats kernel (programmatic dependent launch); with the stats kernel triggering the launch
// at its start, the overlap lost at 64x131072 and won at 4x32769; with the trigger at the
// blocks' end (none: a block that ends lets the next grid launch) it won at 64x131072 in kernel
// time (cupti) but lost at 4x32769 in the graph timer only. The reading: blocks of the second
// grid placed beside a first grid that leaves no room for all of them run the rest as a wave of
// their own. This probe times a softmax-like pair (float32; the stats kernel: each block's
// piece's max and sum of exp; the write kernel: waits, merges its row's pieces, writes
// exp(x - m) / s) at kbench's split sizes for 4x32769, 64x131072 and 128x32769, three ways:
//   serial      the write kernel launched after the stats kernel, no attribute
//   pdl_early   launched overlapping, the stats kernel triggering first thing
//   pdl_late    launched overlapping, no trigger
// each timed three ways, as kbench's timers do:
//   stream      20 pairs queued back to back between two events, per pair
//   graph       the same 20 pairs captured into a CUDA graph and replayed, per pair
//   span        one pair queued behind a host-released gate kernel, from the first stats block's
//               start to the last write block's end by %globaltimer (cupti's span, without CUPTI)
// and, from the span's launch, where the write kernel's blocks started against the stats
// kernel's last end: how many started before it (placed early), when its last block started
// after it (a second wave shows as a late last start), and the most of them one SM ran (blocks
// placed early beside an uneven first grid may crowd some SMs).
// Prediction from the reading: at 64x131072 (576 blocks: 5 on the busiest SMs) pdl_early's last
// write block starts several us after the stats kernel ends, or some SM runs more than 5 write
// blocks, and pdl_late's does neither; at 4x32769 (36 blocks) pdl_early starts all 36 write
// blocks before the stats kernel ends. Not a kbench experiment: a probe, run by scripts/gpu_session.sh (MICROBENCH=pdl_split).
// Cold: 192 MiB are written before each sample (3x a 60 MiB L2), and a sample's pairs read
// inputs of their own. The write kernel's output is checked against a host softmax of one row
// per shape, so that a fast wrong kernel shows.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "probe_check.cuh"

constexpr int kThreads = 256, kLaunches = 20, kRounds = 7;

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}
__device__ __forceinline__ void wait_for_previous_grid() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void trigger_next_grid() { asm volatile("griddepcontrol.launch_dependents;"); }

struct Stats {
  float m, s;
};
__device__ __forceinline__ Stats merge(Stats a, Stats b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.0f};
  return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}
__device__ Stats block_merge(Stats v, Stats* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = merge(v, {__shfl_xor_sync(~0u, v.m, o), __shfl_xor_sync(~0u, v.s, o)});
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kThreads / 32 ? scratch[threadIdx.x] : Stats{-INFINITY, 0.0f};
    for (int o = 16; o > 0; o >>= 1) v = merge(v, {__shfl_xor_sync(~0u, v.m, o), __shfl_xor_sync(~0u, v.s, o)});
    if (threadIdx.x == 0) scratch[0] = v;
  }
  __syncthreads();
  return scratch[0];
}

// stamps: start, end and SM of each block (3 a block), or null (the timed launches do not stamp).
__global__ void __launch_bounds__(kThreads) stats_kernel(const float* x, Stats* stats, int width, int segments,
                                                         int segment, bool trigger_early,
                                                         unsigned long long* stamps) {
  __shared__ Stats scratch[kThreads / 32];
  const unsigned long long t0 = global_ns();
  if (trigger_early) trigger_next_grid();
  const long long row = blockIdx.x / segments;
  const int begin = (blockIdx.x % segments) * segment, end = min(begin + segment, width);
  const float* xr = x + row * width;
  Stats st{-INFINITY, 0.0f};
#pragma unroll 4
  for (int i = begin + threadIdx.x; i < end; i += kThreads) st = merge(st, {xr[i], 1.0f});
  st = block_merge(st, scratch);
  if (threadIdx.x == 0) stats[blockIdx.x] = st;
  if (stamps && threadIdx.x == 0) {
    stamps[3 * blockIdx.x] = t0, stamps[3 * blockIdx.x + 1] = global_ns();
    stamps[3 * blockIdx.x + 2] = sm_id();
  }
}

__global__ void __launch_bounds__(kThreads) write_kernel(const float* x, const Stats* stats, float* y, int width,
                                                         int segments, int segment, unsigned long long* stamps) {
  __shared__ Stats scratch[kThreads / 32];
  const unsigned long long t0 = global_ns();
  wait_for_previous_grid();
  const long long row = blockIdx.x / segments;
  const int begin = (blockIdx.x % segments) * segment, end = min(begin + segment, width);
  Stats st{-INFINITY, 0.0f};
  for (int i = threadIdx.x; i < segments; i += kThreads) st = merge(st, stats[row * segments + i]);
  st = block_merge(st, scratch);
  const float inv = 1.0f / st.s;
  const float* xr = x + row * width;
  float* yr = y + row * width;
#pragma unroll 4
  for (int i = begin + threadIdx.x; i < end; i += kThreads) yr[i] = __expf(xr[i] - st.m) * inv;
  if (stamps && threadIdx.x == 0) {
    stamps[3 * blockIdx.x] = t0, stamps[3 * blockIdx.x + 1] = global_ns();
    stamps[3 * blockIdx.x + 2] = sm_id();
  }
}

// Holds the stream until the host sets *flag, so that what is queued behind it starts at once.
__global__ void gate_kernel(volatile int* flag) {
  while (*flag == 0) {
  }
}

enum class Way { serial, pdl_early, pdl_late };
const char* name(Way w) { return w == Way::serial ? "serial" : w == Way::pdl_early ? "pdl_early" : "pdl_late"; }

struct Shape {
  int rows, width, segments, segment;
  long long elems() const { return static_cast<long long>(rows) * width; }
  unsigned blocks() const { return static_cast<unsigned>(rows) * segments; }
};

// kbench's split sizing (kernels/rows/row_plan.cpp): about 4 blocks an SM, at most one chunk
// (256 threads x 4 vectors of 4 floats) a piece, pieces of whole warp-steps (128 floats).
Shape split_shape(int rows, int width, int sms) {
  const long long chunk = kThreads * 16, quantum = 128, target = 4LL * sms;
  const long long segs = std::clamp<long long>((target + rows - 1) / rows, 1, (width + chunk - 1) / chunk);
  const long long seg = ((width + segs - 1) / segs + quantum - 1) / quantum * quantum;
  return {rows, width, static_cast<int>((width + seg - 1) / seg), static_cast<int>(seg)};
}

void launch_pair(Way way, const Shape& s, const float* x, Stats* stats, float* y, cudaStream_t stream,
                 unsigned long long* stamps = nullptr) {
  stats_kernel<<<s.blocks(), kThreads, 0, stream>>>(x, stats, s.width, s.segments, s.segment,
                                                     way == Way::pdl_early, stamps);
  CHECK(cudaGetLastError());
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(s.blocks());
  config.blockDim = dim3(kThreads);
  config.stream = stream;
  config.attrs = way == Way::serial ? nullptr : &attr;
  config.numAttrs = way == Way::serial ? 0 : 1;
  CHECK(cudaLaunchKernelEx(&config, write_kernel, x, static_cast<const Stats*>(stats), y, s.width, s.segments,
                           s.segment, stamps ? stamps + 3 * s.blocks() : nullptr));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long pool = 256LL << 20;  // floats a side, 1 GiB: sets rotate through it
  float *x, *y;
  Stats* stats;
  unsigned long long* stamps;
  int* flag;
  CHECK(cudaMalloc(&x, pool * 4));
  CHECK(cudaMalloc(&y, pool * 4));
  CHECK(cudaMalloc(&stats, 1 << 20));
  CHECK(cudaMalloc(&stamps, 6 * 4096 * 8));
  CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  int* flag_dev;
  CHECK(cudaHostGetDevicePointer(&flag_dev, flag, 0));
  unsigned char* flush;  // written before each sample: the L2 holds none of the inputs
  constexpr size_t kFlushBytes = 192u << 20;
  CHECK(cudaMalloc(&flush, kFlushBytes));
  {  // inputs: a fixed pseudo-random pattern in [-8, 8)
    std::vector<float> host(pool);
    unsigned r = 12345;
    for (auto& v : host) r = r * 1664525u + 1013904223u, v = static_cast<float>(r >> 8) / (1 << 20) - 8.0f;
    CHECK(cudaMemcpy(x, host.data(), pool * 4, cudaMemcpyHostToDevice));
  }
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const Way ways[] = {Way::serial, Way::pdl_early, Way::pdl_late};

  for (const auto [rows, width] : {std::pair{4, 32769}, std::pair{64, 131072}, std::pair{128, 32769}}) {
    const Shape s = split_shape(rows, width, sms);
    // Sets: the pairs of a sample read different inputs (kLaunches of them, or as many as the pool holds).
    const long long sets = std::min<long long>(kLaunches + 1, pool / s.elems());
    const auto set = [&](int i) { return static_cast<long long>(i % sets) * s.elems(); };
    std::string checked;
    for (const Way way : ways) {  // the check: row 0 against a host softmax
      launch_pair(way, s, x, stats, y, stream);
      CHECK(cudaStreamSynchronize(stream));
      std::vector<float> in(width), out(width);
      CHECK(cudaMemcpy(in.data(), x, width * 4, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(out.data(), y, width * 4, cudaMemcpyDeviceToHost));
      const double m = *std::max_element(in.begin(), in.end());
      double sum = 0, err = 0;
      for (float v : in) sum += std::exp(v - m);
      for (int i = 0; i < width; ++i) err = std::max(err, std::fabs(out[i] - std::exp(in[i] - m) / sum) * sum);
      char line[64];
      std::snprintf(line, sizeof line, " %s %.2g%s", name(way), err, err > 1e-3 ? " (FAILED)" : "");
      checked += line;
    }
    std::printf("check %dx%d, row 0 against a host softmax, max |y - ref| * sum:%s\n", rows, width, checked.c_str());
    std::printf("%-10s %-10s %6s | %8s %8s %8s | %12s %14s %14s\n", "shape", "way", "blocks", "stream", "graph",
                "span", "write early", "write last +us", "write max/SM");
    cudaGraphExec_t graphs[3];
    for (int w = 0; w < 3; ++w) {
      cudaGraph_t g;
      CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      for (int l = 0; l < kLaunches; ++l) launch_pair(ways[w], s, x + set(l), stats, y + set(l), stream);
      CHECK(cudaStreamEndCapture(stream, &g));
      CHECK(cudaGraphInstantiate(&graphs[w], g, 0));
      CHECK(cudaGraphDestroy(g));
      CHECK(cudaGraphLaunch(graphs[w], stream));  // uploads it
    }
    std::vector<double> t[3][3];  // [way][timer]
    for (int round = 0; round < kRounds; ++round)
      for (int w = 0; w < 3; ++w) {
        CHECK(cudaMemsetAsync(flush, round, kFlushBytes, stream));
        CHECK(cudaEventRecord(a, stream));
        for (int l = 0; l < kLaunches; ++l) launch_pair(ways[w], s, x + set(l), stats, y + set(l), stream);
        CHECK(cudaEventRecord(b, stream));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t[w][0].push_back(ms * 1000 / kLaunches);
        CHECK(cudaMemsetAsync(flush, round, kFlushBytes, stream));
        CHECK(cudaEventRecord(a, stream));
        CHECK(cudaGraphLaunch(graphs[w], stream));
        CHECK(cudaEventRecord(b, stream));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t[w][1].push_back(ms * 1000 / kLaunches);
        // The span: one pair behind the gate, stamped.
        CHECK(cudaMemsetAsync(flush, round, kFlushBytes, stream));
        *reinterpret_cast<volatile int*>(flag) = 0;
        gate_kernel<<<1, 1, 0, stream>>>(flag_dev);
        launch_pair(ways[w], s, x + set(kLaunches), stats, y + set(kLaunches), stream, stamps);
        *reinterpret_cast<volatile int*>(flag) = 1;
        CHECK(cudaStreamSynchronize(stream));
        std::vector<unsigned long long> st(6 * s.blocks());
        CHECK(cudaMemcpy(st.data(), stamps, st.size() * 8, cudaMemcpyDeviceToHost));
        const unsigned n = s.blocks();
        unsigned long long first = ~0ull, stats_end = 0, write_end = 0, write_last_start = 0;
        unsigned early = 0;
        std::vector<unsigned> per_sm(sms, 0);  // the write kernel's blocks on each SM
        for (unsigned i = 0; i < n; ++i) first = std::min(first, st[3 * i]), stats_end = std::max(stats_end, st[3 * i + 1]);
        for (unsigned i = n; i < 2 * n; ++i) {
          write_end = std::max(write_end, st[3 * i + 1]);
          write_last_start = std::max(write_last_start, st[3 * i]);
          early += st[3 * i] < stats_end;
          if (st[3 * i + 2] < per_sm.size()) ++per_sm[st[3 * i + 2]];
        }
        t[w][2].push_back((write_end - first) / 1e3);
        if (round == kRounds - 1) {
          char shape[32];
          std::snprintf(shape, sizeof shape, "%dx%d", rows, width);
          std::printf("%-10s %-10s %6u | %8.2f %8.2f %8.2f | %12u %14.2f %14u\n", shape, name(ways[w]), n,
                      median(t[w][0]), median(t[w][1]), median(t[w][2]), early,
                      (static_cast<double>(write_last_start) - static_cast<double>(stats_end)) / 1e3,
                      *std::max_element(per_sm.begin(), per_sm.end()));
        }
      }
    for (auto& g : graphs) CHECK(cudaGraphExecDestroy(g));
  }
  std::printf("\nstream, graph: us a pair (median of %d samples of %d pairs, cold); span: us from the first stats"
              " block's start to the last write block's end, one pair behind a gate (median of %d); write early:"
              " write blocks started before the stats kernel's last end; write last: the last write block's start"
              " after that end, in us; write max/SM: the most write blocks one SM ran (an even spread is the blocks"
              " over the SMs, rounded up; the last round's pair)\n",
              kRounds, kLaunches, kRounds);
  return 0;
}
