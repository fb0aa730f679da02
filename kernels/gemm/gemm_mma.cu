// The tensor-core configurations of gemm_mma.cuh, one instantiation per entry of kTileConfigs
// and 16-bit dtype, and the host launcher that picks one by index.
#include <cuda_runtime.h>

#include <stdexcept>
#include <utility>

#include "core/errors.hpp"
#include "kernels/common/dispatch.cuh"
#include "kernels/gemm/gemm_contract.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_mma.cuh"

namespace kbench::gemm {

namespace {

template <class T, std::size_t I>
cudaError_t launch_config(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, cudaStream_t stream) {
  constexpr TileConfig t = kTileConfigs[I];
  if constexpr (t.fast)
    return launch_mma_gemm_fast<T, t.bm, t.bn, t.bk, t.wm, t.wn, t.stages>(
        a.as<const T>(), b.as<const T>(), c.as<T>(), static_cast<int>(c.rows), static_cast<int>(c.cols),
        static_cast<int>(a.cols), a.row_stride, b.row_stride, stream);
  else
    return launch_mma_gemm<T, t.bm, t.bn, t.bk, t.wm, t.wn, t.stages>(
        a.as<const T>(), b.as<const T>(), c.as<T>(), static_cast<int>(c.rows), static_cast<int>(c.cols),
        static_cast<int>(a.cols), a.row_stride, b.row_stride, stream);
}

template <class T, std::size_t... I>
cudaError_t launch_indexed(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                           cudaStream_t stream, std::index_sequence<I...>) {
  cudaError_t result = cudaErrorInvalidValue;
  ((index == I ? (result = launch_config<T, I>(a, b, c, stream), true) : false) || ...);
  return result;
}

template <class T, bool kATrans, bool kBTrans>
cudaError_t launch_layout(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, int k,
                          cudaStream_t stream) {
  constexpr TileConfig t = kTileConfigs[kBackwardConfig];
  static_assert(t.fast, "the backward runs the pipelined mainloop");
  return launch_mma_gemm_fast<T, t.bm, t.bn, t.bk, t.wm, t.wn, t.stages, kATrans, kBTrans>(
      a.as<const T>(), b.as<const T>(), c.as<T>(), static_cast<int>(c.rows), static_cast<int>(c.cols), k,
      a.row_stride, b.row_stride, stream);
}

template <class T>
cudaError_t launch_layout(bool ta, bool tb, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                          int k, cudaStream_t stream) {
  if (ta && tb) return launch_layout<T, true, true>(a, b, c, k, stream);
  if (ta) return launch_layout<T, true, false>(a, b, c, k, stream);
  if (tb) return launch_layout<T, false, true>(a, b, c, k, stream);
  return launch_layout<T, false, false>(a, b, c, k, stream);
}

}  // namespace

void launch_mma_layout(const DeviceTensor& a, bool a_transposed, const DeviceTensor& b, bool b_transposed,
                       const DeviceTensor& c, cudaStream_t stream) {
  if (a.dtype == DType::f32) throw std::invalid_argument("gemm: the mma kernels take float16 or bfloat16");
  if (std::string why = gemm_problem(a, a_transposed, b, b_transposed, c); !why.empty())
    throw std::invalid_argument("gemm: " + why);
  const TileConfig& t = kTileConfigs[kBackwardConfig];
  if (std::string why = grid_problem(c.rows, c.cols, t.bm, t.bn); !why.empty()) throw std::invalid_argument("gemm: " + why);
  if (!rows_aligned16(a) || !rows_aligned16(b))
    throw std::invalid_argument("gemm: transposed operands need rows on 16-byte boundaries");
  const int k = static_cast<int>(a_transposed ? a.rows : a.cols);
  const cudaError_t err = a.dtype == DType::f16 ? launch_layout<__half>(a_transposed, b_transposed, a, b, c, k, stream)
                                                : launch_layout<__nv_bfloat16>(a_transposed, b_transposed, a, b, c, k, stream);
  KB_CUDA(err);
}

std::string mma_path(const DeviceTensor& a, const DeviceTensor& b) {
  return rows_aligned16(a) && rows_aligned16(b) ? "mma" : "simt";
}

std::string mma_path(const Case& c) {
  // cudaMalloc'd bases are 256-byte aligned; the rows are then aligned when K and N are
  // whole 16-byte chunks.
  const auto es = static_cast<std::int64_t>(dtype_size(c.dtype));
  return (c.shape.at(2) * es) % 16 == 0 && (c.shape.at(1) * es) % 16 == 0 ? "mma" : "simt";
}

void launch_mma(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                cudaStream_t stream) {
  if (index >= kTileConfigs.size()) throw std::invalid_argument("gemm: no tile configuration " + std::to_string(index));
  if (a.dtype == DType::f32) throw std::invalid_argument("gemm: the mma kernels take float16 or bfloat16");
  check_gemm(a, b, c);
  const TileConfig& t = kTileConfigs[index];
  if (std::string why = grid_problem(c.rows, c.cols, t.bm, t.bn); !why.empty())
    throw std::invalid_argument("gemm mma_" + t.name() + ": " + why);
  if (mma_path(a, b) != "mma") return launch_simt(a, b, c, stream);
  constexpr auto all = std::make_index_sequence<kTileConfigs.size()>{};
  cudaError_t err = cudaSuccess;
  if (a.dtype == DType::f16) err = launch_indexed<__half>(index, a, b, c, stream, all);
  else err = launch_indexed<__nv_bfloat16>(index, a, b, c, stream, all);
  KB_CUDA(err);
}

}  // namespace kbench::gemm
