// softmax backward: dx = y * (dy - dot(y, dy)) per row, float32 inside.
// Bytes: read y and dy, write dx (3 x rows x width elements). Simple to fast:
//   eager (baseline): two kernels, the row dot and then an elementwise dx (a framework
//          without fusion runs more: PyTorch materialises y * dy first).
//   looped: a block per row, grid-stride; pass 1 the dot (lane partials per chunk, Kahan
//          across chunks), pass 2 re-reads y and dy (from L2) and writes dx.
//   split: few wide rows; kernel 1 writes each piece's partial dot, kernel 2 adds the row's
//          partials in a fixed order and writes its piece. Kernel 2 is launched overlapping
//          kernel 1 and waits inside for the partials; split_serial launches it after, the control.
//   resident: y and dy held in registers (2 x 1-8 vectors per thread): one read of each.
#include <cuda_runtime.h>

#include "core/errors.hpp"
#include "kernels/common/launch_ex.cuh"
#include "kernels/rows/row_contract.hpp"
#include "kernels/rows/row_device.cuh"
#include "kernels/rows/row_family.hpp"
#include "kernels/rows/row_launch.hpp"

namespace kbench::rows {

Op make_softmax_backward_op();  // softmax_backward_op.cpp

namespace {

// The backward holds y and dy, so its resident rows end at 512 threads x 4 vectors (128
// registers each; 1024 threads would cap them at 64 and spill), and so does the automatic
// plan. (bfloat16 once looped here: held in registers it took 99-161 registers per thread and
// ran 1.2-1.4x slower than looped, because the compiler kept the converted floats live across
// the dot reduction; keep_packed in the kernel brings it to float16's 64.) Like softmax it
// re-reads rows when looped; a split piece keeps one float. The fit on two bfloat16 grid runs of
// one H200 (archive/grid/grid-20261201T161607Z-08775d.json.gz, -161700Z-353e58.json) also wanted
// a block past 32 vectors (results/fit/fit-20261201T162114Z-930866.json; 1x2048: 1.63 us in a
// 64-thread block, 2.30 in a warp), but past the grid's 8 rows per SM the warp wins
// (configs/grid_outside.json: 16384x384 11.83 us in a block, 6.09 in a warp), so the warp
// threshold stays at its default; held, the fit keeps the rest
// (results/fit/fit-20261201T171049Z-a3e09d.json: held-out mean regret 3.3%, 29 of 345 cells more
// than 10% off, against 10.4% and 63 before). From the fit (figures: run 08775d, graph, warm):
// - every row count below the SMs splits past 16384 elements (66x131072: split 17.7 us, looped
//   45.7), not only those below half of them;
// - the looped chunk is 4096 only up to 4 blocks per SM.
// Both findings on the warp hold, by row count: below 16 rows per SM (2112 on an H200) rows of
// more than 32 vectors take the block (warp_min_rows_per_sm; outside grid
// archive/grid/grid-20261202T015819Z-58dca3.json.gz: bfloat16 128x2048 1.81 us in the block, 2.48
// in the 8-vector warp; 2112x384 2.77 in the block, 2.17 in the warp). Past 128 vectors the
// block wins at every row count of that grid (bfloat16 4096x1536: 6.28 us in the block, 7.64 in
// the 8-vector warp; 16384x2048: 48.06 against 49.86), so the warp stops there.
// Two later runs of the main grid (results/grid/grid-20261202T044155Z-ebc133.json, -044251Z-462718;
// fit results/fit/fit-20261202T050656Z-075b29.json, warp_max_vecs held for the outside grid's
// reason) put the warp's start at 8 rows per SM, where 1056 rows of 33-128 vectors run faster
// in it: held-out mean regret 0.1% either way, 1 cell more than 10% off against 1-2.
constexpr RowRules kRules{.max_threads_4 = 512,
                          .auto_resident_vecs = 4 * 512,
                          .warp_max_vecs = 128,
                          .warp_min_rows_per_sm = 8,
                          .split_below_divisor = 1,
                          .split_above_width = 16384,
                          .split_all_sms_above_width = 32768,
                          .chunk_4096_per_sm = 4};

constexpr int kLoopVecs = 4;

template <class T>
__device__ __forceinline__ float dot16(const uint4& a, const uint4& b) {
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) s += elem<T>(a, j) * elem<T>(b, j);
  return s;
}

template <class T>
__device__ __forceinline__ Vec16<T> grad16(const uint4& y, const uint4& dy, float dot) {
  Vec16<T> o;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) o.v[j] = from_float<T>(elem<T>(y, j) * (elem<T>(dy, j) - dot));
  return o;
}

template <class T>
__device__ __forceinline__ float grad1(T y, T dy, float dot) {
  return to_float(y) * (to_float(dy) - dot);
}

// dx at the row's scalar head and tail (fewer than a vector each): element i of each, for the
// threads with i below their length.
template <class T>
__device__ __forceinline__ void grad_edges(const T* yr, const T* dyr, T* dxr, const RowParts& p, int i, float dot) {
  if (i < p.head) dxr[i] = from_float<T>(grad1(yr[i], dyr[i], dot));
  if (i < p.tail) {
    const int e = p.tail_begin + i;
    dxr[e] = from_float<T>(grad1(yr[e], dyr[e], dot));
  }
}

struct Rows3 {
  const void* y;
  std::int64_t y_stride;
  const void* dy;
  std::int64_t dy_stride;
  void* dx;
};

// `Aligned`: see row_parts_for.
template <class T, int K, bool Aligned>
__global__ void __launch_bounds__(kRules.max_threads(K))
    softmax_bwd_resident_kernel(Rows3 t, std::int64_t rows, int width, int lanes) {
  __shared__ float scratch[32];
  wait_for_previous_grid();  // launched overlapping a step's forward (LaunchArgs::overlap_previous): y first
  const auto [row, lane] = resident_slot(lanes);
  const bool active = row < rows;
  const std::int64_t r = active ? row : 0;
  const T* yr = static_cast<const T*>(t.y) + row_offset(r, t.y_stride);
  const T* dyr = static_cast<const T*>(t.dy) + row_offset(r, t.dy_stride);
  T* dxr = static_cast<T*>(t.dx) + row_offset(r, width);
  const RowParts p = row_parts_for<T, Aligned>(yr, active ? width : 0);
  const bool dy_vec = same_phase_for<Aligned>(yr, dyr), dx_vec = same_phase_for<Aligned>(yr, dxr);

  uint4 ry[K], rdy[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = lane + k * lanes;
    if (v < p.nvec) {
      ry[k] = load16<T, Cache::normal>(yr + p.head + v * kVec<T>, true);
      rdy[k] = load16<T, Cache::normal>(dyr + p.head + v * kVec<T>, dy_vec);
    }
  }
  float dot = 0.0f;
  if (lane < p.head) dot += to_float(yr[lane]) * to_float(dyr[lane]);
  if (lane < p.tail) dot += to_float(yr[p.tail_begin + lane]) * to_float(dyr[p.tail_begin + lane]);
#pragma unroll
  for (int k = 0; k < K; ++k)
    if (lane + k * lanes < p.nvec) dot += dot16<T>(ry[k], rdy[k]);
  dot = row_reduce(dot, lanes, scratch, SumOp{});

  // Only the packed vectors live across the reduction (see keep_packed).
#pragma unroll
  for (int k = 0; k < K; ++k)
    if (lane + k * lanes < p.nvec) {
      keep_packed(ry[k]);
      keep_packed(rdy[k]);
    }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = lane + k * lanes;
    if (v < p.nvec) store16<T>(dxr + p.head + v * kVec<T>, grad16<T>(ry[k], rdy[k], dot), dx_vec);
  }
  grad_edges(yr, dyr, dxr, p, lane, dot);
}

// This thread's vectors of y and dy in a chunk of a looped row, from vector `first` on in steps of
// the block (vectors past the row's end are left unset and unused).
template <class T, Cache C>
__device__ __forceinline__ void load_chunk(uint4 (&ry)[kLoopVecs], uint4 (&rdy)[kLoopVecs], const T* yr, const T* dyr,
                                           const RowParts& p, int first, bool dy_vec) {
#pragma unroll
  for (int k = 0; k < kLoopVecs; ++k) {
    const int v = first + k * blockDim.x;
    if (v < p.nvec) {
      ry[k] = load16<T, C>(yr + p.head + v * kVec<T>, true);
      rdy[k] = load16<T, C>(dyr + p.head + v * kVec<T>, dy_vec);
    }
  }
}

// This thread's compensated partial of dot(y, dy) over n elements.
template <class T>
__device__ __forceinline__ float thread_dot(const T* yr, const T* dyr, const RowParts& p) {
  const int step = blockDim.x * kLoopVecs, t = threadIdx.x;
  const bool dy_vec = same_phase(yr, dyr);
  KahanSum acc;
  for (int base = 0; base < p.nvec; base += step) {
    uint4 ry[kLoopVecs], rdy[kLoopVecs];
    load_chunk<T, Cache::normal>(ry, rdy, yr, dyr, p, base + t, dy_vec);
    float part = 0.0f;
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k)
      if (base + t + k * blockDim.x < p.nvec) part += dot16<T>(ry[k], rdy[k]);
    acc.add(part);
  }
  float edge = 0.0f;
  if (t < p.head) edge += to_float(yr[t]) * to_float(dyr[t]);
  if (t < p.tail) edge += to_float(yr[p.tail_begin + t]) * to_float(dyr[p.tail_begin + t]);
  acc.add(edge);
  return acc.value();
}

template <class T>
__device__ __forceinline__ void write_grad(const T* yr, const T* dyr, T* dxr, const RowParts& p,
                                           float dot) {
  const int step = blockDim.x * kLoopVecs, t = threadIdx.x;
  const bool dy_vec = same_phase(yr, dyr), dx_vec = same_phase(yr, dxr);
  for (int base = 0; base < p.nvec; base += step) {
    uint4 ry[kLoopVecs], rdy[kLoopVecs];
    load_chunk<T, Cache::last_use>(ry, rdy, yr, dyr, p, base + t, dy_vec);
#pragma unroll
    for (int k = 0; k < kLoopVecs; ++k) {
      const int v = base + t + k * blockDim.x;
      if (v < p.nvec) store16<T>(dxr + p.head + v * kVec<T>, grad16<T>(ry[k], rdy[k], dot), dx_vec);
    }
  }
  grad_edges(yr, dyr, dxr, p, t, dot);
}

template <class T>
__global__ void __launch_bounds__(1024) softmax_bwd_looped_kernel(Rows3 t, std::int64_t rows,
                                                                  int width) {
  __shared__ float scratch[32];
  wait_for_previous_grid();  // launched overlapping a step's forward (LaunchArgs::overlap_previous): y first
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* yr = static_cast<const T*>(t.y) + row_offset(row, t.y_stride);
    const T* dyr = static_cast<const T*>(t.dy) + row_offset(row, t.dy_stride);
    T* dxr = static_cast<T*>(t.dx) + row_offset(row, width);
    const RowParts p = row_parts(yr, width);
    const float dot = block_reduce(thread_dot(yr, dyr, p), scratch, SumOp{});
    write_grad(yr, dyr, dxr, p, dot);
  }
}

template <class T>
__global__ void __launch_bounds__(256) softmax_bwd_split_dot_kernel(Rows3 t, float* __restrict__ partial,
                                                                    int width, int segments,
                                                                    int segment) {
  __shared__ float scratch[32];
  trigger_next_grid();  // the write kernel's blocks may take the SMs this grid's last wave leaves
  wait_for_previous_grid();  // launched overlapping a step's forward (LaunchArgs::overlap_previous): y first
  const std::int64_t row = blockIdx.x / segments;
  const int begin = (blockIdx.x % segments) * segment;
  const T* yr = static_cast<const T*>(t.y) + row_offset(row, t.y_stride) + begin;
  const T* dyr = static_cast<const T*>(t.dy) + row_offset(row, t.dy_stride) + begin;
  const RowParts p = row_parts(yr, min(segment, width - begin));
  const float dot = block_reduce(thread_dot(yr, dyr, p), scratch, SumOp{});
  if (threadIdx.x == 0) partial[blockIdx.x] = dot;
}

template <class T>
__global__ void __launch_bounds__(256) softmax_bwd_split_write_kernel(Rows3 t,
                                                                      const float* __restrict__ partial,
                                                                      int width, int segments,
                                                                      int segment) {
  __shared__ float scratch[32];
  wait_for_previous_grid();  // launched overlapping the dot kernel: its partials first
  const std::int64_t row = blockIdx.x / segments;
  const int begin = (blockIdx.x % segments) * segment;
  KahanSum acc;  // fixed order: every block of the row gets the same bits
  for (int i = threadIdx.x; i < segments; i += blockDim.x) acc.add(partial[row * segments + i]);
  const float dot = block_reduce(acc.value(), scratch, SumOp{});
  const T* yr = static_cast<const T*>(t.y) + row_offset(row, t.y_stride) + begin;
  const T* dyr = static_cast<const T*>(t.dy) + row_offset(row, t.dy_stride) + begin;
  T* dxr = static_cast<T*>(t.dx) + row_offset(row, width) + begin;
  write_grad(yr, dyr, dxr, row_parts(yr, min(segment, width - begin)), dot);
}

// ---- eager: two kernels --------------------------------------------------------------------

template <class T>
__global__ void __launch_bounds__(256) softmax_bwd_eager_dot_kernel(Rows3 t, float* __restrict__ dots,
                                                                    int width) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const T* yr = static_cast<const T*>(t.y) + row_offset(row, t.y_stride);
  const T* dyr = static_cast<const T*>(t.dy) + row_offset(row, t.dy_stride);
  const float dot = block_reduce(thread_dot(yr, dyr, row_parts(yr, width)), scratch, SumOp{});
  if (threadIdx.x == 0) dots[row] = dot;
}

template <class T>
__global__ void __launch_bounds__(256) softmax_bwd_eager_grad_kernel(Rows3 t, const float* __restrict__ dots,
                                                                     std::int64_t rows, int width,
                                                                     int pieces) {
  const std::int64_t items = rows * pieces;
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const std::int64_t row = item / pieces;
    const int piece = static_cast<int>(item % pieces);
    const T* yr = static_cast<const T*>(t.y) + row_offset(row, t.y_stride);
    const T* dyr = static_cast<const T*>(t.dy) + row_offset(row, t.dy_stride);
    T* dxr = static_cast<T*>(t.dx) + row_offset(row, width);
    const RowParts p = row_parts(yr, width);
    const float dot = dots[row];
    const int v = piece * blockDim.x + threadIdx.x;
    if (v < p.nvec) {
      const int e = p.head + v * kVec<T>;
      const uint4 y = load16<T, Cache::last_use>(yr + e, true);
      const uint4 dy = load16<T, Cache::last_use>(dyr + e, same_phase(yr, dyr));
      store16<T>(dxr + e, grad16<T>(y, dy, dot), same_phase(yr, dxr));
    }
    if (piece == 0) grad_edges(yr, dyr, dxr, p, static_cast<int>(threadIdx.x), dot);
  }
}

Rows3 rows3(const LaunchArgs& a) {
  return Rows3{a.inputs[0].data, a.inputs[0].row_stride, a.inputs[1].data, a.inputs[1].row_stride, a.outputs[0].data};
}

// The plan's kernels for launch_row_plan (row_launch.hpp).
struct SoftmaxBackwardKernels : PlanLaunch {
  // Every plan's first kernel may overlap a step's forward (PlanLaunch::first): each waits
  // inside before it reads y.
  LaunchShape first_launch(std::int64_t blocks, int threads) const {
    return first({.grid = dim3(static_cast<unsigned>(blocks)), .block = dim3(static_cast<unsigned>(threads))});
  }

  template <class T, int K>
  void resident() const {
    const Rows3 t = rows3(a);
    const std::int64_t w = g.width;
    const bool aligned = rows_aligned(static_cast<const T*>(t.y), t.y_stride, w) &&
                         rows_aligned(static_cast<const T*>(t.dy), t.dy_stride, w) &&
                         rows_aligned(static_cast<const T*>(t.dx), w, w);
    const auto kernel = aligned ? softmax_bwd_resident_kernel<T, K, true> : softmax_bwd_resident_kernel<T, K, false>;
    KB_CUDA(launch_ex(kernel, first_launch(plan.blocks, plan.threads), t, g.rows, static_cast<int>(w), plan.lanes));
  }
  template <class T>
  void looped() const {
    KB_CUDA(launch_ex(softmax_bwd_looped_kernel<T>, first_launch(plan.blocks, plan.threads), rows3(a), g.rows,
                      static_cast<int>(g.width)));
  }
  template <class T>
  void split() const {
    auto* partial = static_cast<float*>(a.workspace);
    const auto blocks = static_cast<unsigned>(g.rows * plan.segments);
    const int w = static_cast<int>(g.width), seg = static_cast<int>(plan.segment);
    KB_CUDA(launch_ex(softmax_bwd_split_dot_kernel<T>, first_launch(blocks, 256), rows3(a), partial, w, plan.segments, seg));
    // Launched overlapping the dot kernel, as rmsnorm's split y kernel (rmsnorm.cu says what that gains).
    KB_CUDA(launch_ex(softmax_bwd_split_write_kernel<T>, second({.grid = dim3(blocks), .block = dim3(256)}), rows3(a),
                      static_cast<const float*>(partial), w, plan.segments, seg));
  }
};

void launch_softmax_backward(const RowPlan& plan, const LaunchArgs& a) {
  const RowGeometry g = checked_row_geometry(a, {cols_of(a.c)});
  if (g.rows == 0 || g.width == 0) return;
  launch_row_plan(kRules, plan, a, SoftmaxBackwardKernels{{plan, a, g}});
}

void launch_eager(const LaunchArgs& a) {
  const RowGeometry s = checked_row_geometry(a, {cols_of(a.c)});
  if (s.rows == 0 || s.width == 0) return;
  if (a.workspace == nullptr) throw std::invalid_argument(a.c.op + " eager: no workspace");
  const int w = static_cast<int>(s.width);
  auto* dots = static_cast<float*>(a.workspace);
  dispatch_dtype(a.c.dtype, [&]<class T>() {
    softmax_bwd_eager_dot_kernel<T><<<static_cast<unsigned>(s.rows), 256, 0, a.stream>>>(rows3(a), dots, w);
    KB_CUDA_LAUNCH();
    const int pieces = std::max(1, static_cast<int>((s.width / kVec<T> + 255) / 256));
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(s.rows * pieces, std::int64_t{1} << 20));
    softmax_bwd_eager_grad_kernel<T><<<blocks, 256, 0, a.stream>>>(rows3(a), dots, s.rows, w, pieces);
  });
  KB_CUDA_LAUNCH();
}

}  // namespace

void register_softmax_backward(Registry& r) {
  const RowOpDefinition def{
      make_softmax_backward_op(), kRules, launch_softmax_backward,
      {{"auto", std::nullopt, "follows row_plan"},
       {"single_block", Forced::resident_any, "y and dy held in registers, one read of each"},
       {"looped", Forced::looped, "dot over chunks, then a second read of y and dy"},
       {"split", Forced::split, "per-piece partial dots, then a fixed-order sum and write"},
       {"split_serial", Forced::split, "split with the write kernel launched after the dot kernel ends (the control)", true}}};
  register_row_op(r, def);
  r.add_variant(row_baseline(
      def.op.name, "eager", "two kernels: row dot(y, dy), then elementwise dx",
      [](const Case& c) { return static_cast<std::size_t>(rows_of(c)) * sizeof(float); }, launch_eager));
}

}  // namespace kbench::rows
