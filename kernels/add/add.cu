// add variants, simple to fast. Each reads x and y and writes z once: 3n elements of traffic.
//   scalar: one element per thread, one launch-wide grid. Loads are 2 or 4 bytes wide, so a
//           warp moves 64-128 bytes per instruction: fine for float32, short of bandwidth for
//           16-bit types, where each SM needs more bytes in flight than its threads can hold.
//   vec16:  grid-stride, 16 bytes per load (4 floats or 8 halves), two vectors of x and y in
//           flight per thread before the first add; the SMs are filled once and loop.
//   tiled:  no grid-stride loop: one block per tile of 4 x 256 vectors, all eight loads of a
//           thread issued before the first add, and as many blocks as tiles. Blocks retire in
//           roughly address order, so DRAM sees three long streams rather than 1056 interleaved
//           strided ones (PyTorch's elementwise kernels are built this way).
//   cub (baseline): cub::DeviceTransform, the library path Thrust's transform uses.
#include <cuda_runtime.h>

#include <cub/device/device_transform.cuh>

#include "core/errors.hpp"
#include "kernels/add/add.hpp"
#include "kernels/common/dispatch.cuh"
#include "kernels/common/grid.hpp"

namespace kbench {

namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void __launch_bounds__(kThreads) add_scalar_kernel(const T* __restrict__ x,
                                                              const T* __restrict__ y,
                                                              T* __restrict__ z, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) z[i] = from_float<T>(to_float(x[i]) + to_float(y[i]));
}

template <class T>
__device__ __forceinline__ Pack16<T> add_pack(const Pack16<T>& a, const Pack16<T>& b) {
  Pack16<T> c;
#pragma unroll
  for (int k = 0; k < Pack16<T>::kCount; ++k) c.v[k] = from_float<T>(to_float(a.v[k]) + to_float(b.v[k]));
  return c;
}

template <class T>
__global__ void __launch_bounds__(kThreads) add_vec16_kernel(const T* __restrict__ x,
                                                             const T* __restrict__ y,
                                                             T* __restrict__ z, std::int64_t n) {
  using P = Pack16<T>;
  constexpr int kUnroll = 2;
  const auto* xv = reinterpret_cast<const P*>(x);
  const auto* yv = reinterpret_cast<const P*>(y);
  auto* zv = reinterpret_cast<P*>(z);
  const std::int64_t n_vec = n / P::kCount;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  std::int64_t i = tid;
  for (; i + stride < n_vec; i += kUnroll * stride) {
    const P a0 = xv[i], b0 = yv[i], a1 = xv[i + stride], b1 = yv[i + stride];
    zv[i] = add_pack(a0, b0);
    zv[i + stride] = add_pack(a1, b1);
  }
  if (i < n_vec) zv[i] = add_pack(xv[i], yv[i]);
  // The last n % kCount elements, one per thread.
  const std::int64_t t = n_vec * P::kCount + tid;
  if (t < n) z[t] = from_float<T>(to_float(x[t]) + to_float(y[t]));
}

constexpr int kTileVectors = 4;  // vectors of each input per thread

template <class T>
__global__ void __launch_bounds__(kThreads) add_tiled_kernel(const T* __restrict__ x,
                                                             const T* __restrict__ y,
                                                             T* __restrict__ z, std::int64_t n) {
  using P = Pack16<T>;
  const auto* xv = reinterpret_cast<const P*>(x);
  const auto* yv = reinterpret_cast<const P*>(y);
  auto* zv = reinterpret_cast<P*>(z);
  const std::int64_t n_vec = n / P::kCount;
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kThreads * kTileVectors + threadIdx.x;
  if (base + (kTileVectors - 1) * kThreads < n_vec) {  // a whole tile: no bounds checks
    P a[kTileVectors], b[kTileVectors];
#pragma unroll
    for (int k = 0; k < kTileVectors; ++k) {
      a[k] = xv[base + k * kThreads];
      b[k] = yv[base + k * kThreads];
    }
#pragma unroll
    for (int k = 0; k < kTileVectors; ++k) zv[base + k * kThreads] = add_pack(a[k], b[k]);
  } else {
    for (int k = 0; k < kTileVectors; ++k)
      if (base + k * kThreads < n_vec) zv[base + k * kThreads] = add_pack(xv[base + k * kThreads], yv[base + k * kThreads]);
  }
  // The last n % kCount elements, by the first threads of the last block.
  if (blockIdx.x == gridDim.x - 1) {
    const std::int64_t t = n_vec * P::kCount + threadIdx.x;
    if (t < n) z[t] = from_float<T>(to_float(x[t]) + to_float(y[t]));
  }
}

struct AddInFloat {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return from_float<T>(to_float(a) + to_float(b));
  }
};

}  // namespace

void launch_add_vec16(DType t, const void* x, const void* y, void* z, std::int64_t n,
                      cudaStream_t stream) {
  if (!aligned16(x) || !aligned16(y) || !aligned16(z))
    throw std::invalid_argument("add vec16: pointers must be 16-byte aligned");
  if (n <= 0) return;
  dispatch_dtype(t, [&]<class T>() {
    const std::int64_t n_vec = n / Pack16<T>::kCount;
    add_vec16_kernel<T><<<grid_stride_blocks(std::max<std::int64_t>(n_vec, 1), kThreads), kThreads, 0,
                          stream>>>(static_cast<const T*>(x), static_cast<const T*>(y),
                                    static_cast<T*>(z), n);
  });
  KB_CUDA_LAUNCH();
}

void register_add(Registry& r) {
  const Op op = make_add_op();
  r.add_op(op);
  r.add_variant(make_variant(op.name, "scalar", "one element per thread", [](const LaunchArgs& a) {
    const std::int64_t n = a.c.shape.at(0);
    if (n <= 0) return;
    dispatch_dtype(a.c.dtype, [&]<class T>() {
      const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
      add_scalar_kernel<T><<<blocks, kThreads, 0, a.stream>>>(a.inputs[0].as<const T>(), a.inputs[1].as<const T>(),
                                                              a.outputs[0].as<T>(), n);
    });
    KB_CUDA_LAUNCH();
  }));
  r.add_variant(make_variant(op.name, "vec16", "grid-stride, 16-byte vector loads, 2 vectors in flight per thread",
                             [](const LaunchArgs& a) {
                               launch_add_vec16(a.c.dtype, a.inputs[0].data, a.inputs[1].data, a.outputs[0].data,
                                                a.c.shape.at(0), a.stream);
                             }));
  r.add_variant(make_variant(
      op.name, "tiled", "one block per tile of 4x256 16-byte vectors, all loads before the adds", [](const LaunchArgs& a) {
        const std::int64_t n = a.c.shape.at(0);
        if (!aligned16(a.inputs[0].data) || !aligned16(a.inputs[1].data) || !aligned16(a.outputs[0].data))
          throw std::invalid_argument("add tiled: pointers must be 16-byte aligned");
        if (n <= 0) return;
        dispatch_dtype(a.c.dtype, [&]<class T>() {
          const std::int64_t n_vec = n / Pack16<T>::kCount;
          const std::int64_t per_block = std::int64_t{kThreads} * kTileVectors;
          const auto blocks = static_cast<unsigned>(std::max<std::int64_t>(1, (n_vec + per_block - 1) / per_block));
          add_tiled_kernel<T><<<blocks, kThreads, 0, a.stream>>>(a.inputs[0].as<const T>(), a.inputs[1].as<const T>(),
                                                                 a.outputs[0].as<T>(), n);
        });
        KB_CUDA_LAUNCH();
      }));
  Variant cub = make_variant(op.name, "cub", "cub::DeviceTransform::Transform", [](const LaunchArgs& a) {
    dispatch_dtype(a.c.dtype, [&]<class T>() {
      KB_CUDA(cub::DeviceTransform::Transform(
          ::cuda::std::make_tuple(a.inputs[0].as<const T>(), a.inputs[1].as<const T>()), a.outputs[0].as<T>(),
          a.c.shape.at(0), AddInFloat{}, a.stream));
    });
  });
  cub.baseline = true;
  r.add_variant(std::move(cub));
}

}  // namespace kbench
