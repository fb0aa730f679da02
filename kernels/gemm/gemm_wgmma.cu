// The Hopper configurations of gemm_wgmma.cuh (one instantiation per entry of kWgmmaConfigs,
// 16-bit dtype and operand layout), their tensor maps, and the host launchers that pick one.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "device/device_limits.hpp"
#include "kernels/gemm/gemm_contract.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_wgmma.cuh"

namespace kbench::gemm {

namespace {

// cuTensorMapEncodeTiled from the driver, through the runtime (no link against libcuda).
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    KB_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || p == nullptr)
      throw CudaError("the driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12 or later)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// How a launch cuts K: `splits` ranges, their float32 partials in `partials`.
struct Split {
  int splits = 1;
  float* partials = nullptr;
};

template <class T, std::size_t I, bool kAMajorM, bool kBMajorN>
cudaError_t launch_config(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, int k, Split split,
                          cudaStream_t stream) {
  if constexpr (kWgmmaConfigs[I].cluster > 1 && !kBMajorN)
    throw std::invalid_argument("gemm wgmma_" + kWgmmaConfigs[I].name() + ": pairs multicast B as given (N-major), not B^T");
  else
    return launch_wgmma_gemm<T, kWgmmaConfigs[I], kAMajorM, kBMajorN>(
      a.as<const T>(), a.row_stride, b.as<const T>(), b.row_stride, c.as<T>(), static_cast<int>(c.rows),
      static_cast<int>(c.cols), k, current_device_limits().sms, stream, split.splits, split.partials);
}

template <class T, bool kAMajorM, bool kBMajorN, std::size_t... I>
cudaError_t launch_indexed(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                           int k, Split split, cudaStream_t stream, std::index_sequence<I...>) {
  cudaError_t result = cudaErrorInvalidValue;
  ((index == I ? (result = launch_config<T, I, kAMajorM, kBMajorN>(a, b, c, k, split, stream), true) : false) || ...);
  return result;
}

// The four operand layouts: A as given or transposed (M-major), B as given (N-major) or
// transposed (K-major).
template <class T>
cudaError_t launch_layout(std::size_t index, bool a_transposed, bool b_transposed, const DeviceTensor& a,
                          const DeviceTensor& b, const DeviceTensor& c, int k, Split split, cudaStream_t stream) {
  constexpr auto all = std::make_index_sequence<kWgmmaConfigs.size()>{};
  if (a_transposed && b_transposed) return launch_indexed<T, true, false>(index, a, b, c, k, split, stream, all);
  if (a_transposed) return launch_indexed<T, true, true>(index, a, b, c, k, split, stream, all);
  if (b_transposed) return launch_indexed<T, false, false>(index, a, b, c, k, split, stream, all);
  return launch_indexed<T, false, true>(index, a, b, c, k, split, stream, all);
}

// The checks and the launch of launch_wgmma_layout, K cut as `split` says.
void launch_checked(std::size_t index, const DeviceTensor& a, bool a_transposed, const DeviceTensor& b,
                    bool b_transposed, const DeviceTensor& c, Split split, cudaStream_t stream) {
  if (index >= kWgmmaConfigs.size())
    throw std::invalid_argument("gemm: no wgmma configuration " + std::to_string(index));
  if (std::string why = hopper_problem(); !why.empty()) throw std::invalid_argument("gemm wgmma: " + why);
  if (a.dtype == DType::f32) throw std::invalid_argument("gemm: the wgmma kernels take float16 or bfloat16");
  if (std::string why = gemm_problem(a, a_transposed, b, b_transposed, c); !why.empty())
    throw std::invalid_argument("gemm: " + why);
  const WgmmaConfig& w = kWgmmaConfigs[index];
  if (std::string why = grid_problem(c.rows, c.cols, WgmmaConfig::kBM, w.bn); !why.empty())
    throw std::invalid_argument("gemm wgmma_" + w.name() + ": " + why);
  const std::int64_t k = a_transposed ? a.rows : a.cols;
  if (wgmma_path(a, b, k) != "wgmma") {
    if (!a_transposed && !b_transposed) return launch_simt(a, b, c, stream);
    if (k == 0) KB_CUDA(cudaMemsetAsync(c.data, 0, static_cast<std::size_t>(c.rows * c.cols) * 2, stream));
    else throw std::invalid_argument("gemm: transposed operands need rows on 16-byte boundaries");
    return;
  }
  const int kk = static_cast<int>(k);
  const cudaError_t err =
      a.dtype == DType::f16 ? launch_layout<__half>(index, a_transposed, b_transposed, a, b, c, kk, split, stream)
                            : launch_layout<__nv_bfloat16>(index, a_transposed, b_transposed, a, b, c, kk, split, stream);
  KB_CUDA(err);
}

}  // namespace

CUtensorMap make_operand_map(const void* base, bool bfloat16, std::int64_t rows, std::int64_t cols,
                             std::int64_t row_stride, int box_rows, int box_cols) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride) * 2};  // bytes, of the outer dimension
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, bfloat16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                    2, const_cast<void*>(base), dims, strides, box, element_strides,
                                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::invalid_argument("gemm wgmma: TMA cannot describe a [" + std::to_string(rows) + ", " +
                                std::to_string(cols) + "] operand of row stride " + std::to_string(row_stride) +
                                " (cuTensorMapEncodeTiled error " + std::to_string(static_cast<int>(r)) + ")");
  return map;
}

std::string hopper_problem() {
  static std::once_flag once;
  static std::string why;
  std::call_once(once, [] {
    int device = 0;
    cudaDeviceProp p{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&p, device) != cudaSuccess) {
      why = "no CUDA device";
      return;
    }
    if (p.major != 9 || p.minor != 0)
      why = "needs an sm_90 device (wgmma and TMA); this one is sm_" + std::to_string(p.major) + std::to_string(p.minor);
  });
  return why;
}

std::string wgmma_path(const DeviceTensor& a, const DeviceTensor& b, std::int64_t k) {
  return k > 0 && rows_aligned16(a) && rows_aligned16(b) ? "wgmma" : "simt";
}

int wgmma_splits(std::int64_t m, std::int64_t n, std::int64_t k, int bn, int sms) {
  const std::int64_t tiles = ((m + WgmmaConfig::kBM - 1) / WgmmaConfig::kBM) * ((n + bn - 1) / bn);
  if (2 * tiles >= sms) return 1;
  const std::int64_t k_tiles = (k + 63) / 64;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({sms / tiles, k_tiles / 4, 16})));
}

std::size_t wgmma_workspace_bytes(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (index >= kWgmmaConfigs.size() || !hopper_problem().empty()) return 0;
  const int splits = wgmma_splits(m, n, k, kWgmmaConfigs[index].bn, current_device_limits().sms);
  return splits > 1 ? static_cast<std::size_t>(splits) * static_cast<std::size_t>(m * n) * sizeof(float) : 0;
}

void launch_wgmma_layout(std::size_t index, const DeviceTensor& a, bool a_transposed, const DeviceTensor& b,
                         bool b_transposed, const DeviceTensor& c, cudaStream_t stream) {
  launch_checked(index, a, a_transposed, b, b_transposed, c, Split{}, stream);
}

void launch_wgmma(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                  cudaStream_t stream, void* workspace, std::size_t workspace_bytes) {
  Split split;
  if (index < kWgmmaConfigs.size() && hopper_problem().empty()) {
    // As many splits as the heuristic wants and the workspace holds (1: none).
    const std::size_t slice = static_cast<std::size_t>(c.rows * c.cols) * sizeof(float);
    const int wanted = wgmma_splits(c.rows, c.cols, a.cols, kWgmmaConfigs[index].bn, current_device_limits().sms);
    const auto fits = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(wanted), workspace_bytes / slice));
    if (fits > 1 && workspace != nullptr) split = Split{fits, static_cast<float*>(workspace)};
  }
  launch_checked(index, a, false, b, false, c, split, stream);
}

}  // namespace kbench::gemm
