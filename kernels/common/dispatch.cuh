// Device-side element types and the one switch from DType to them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include "core/dtype.hpp"

namespace kbench {

// Calls f.template operator()<T>() with T = float, __half or __nv_bfloat16.
template <class F>
void dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f32: f.template operator()<float>(); return;
    case DType::f16: f.template operator()<__half>(); return;
    case DType::bf16: f.template operator()<__nv_bfloat16>(); return;
  }
  throw std::logic_error("unhandled dtype");
}

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// 16 bytes of T, loaded and stored as one uint4 (LDG.E.128 / STG.E.128).
template <class T>
struct alignas(16) Pack16 {
  static constexpr int kCount = 16 / sizeof(T);
  T v[kCount];
};

__host__ __device__ inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace kbench
