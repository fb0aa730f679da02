// The Hopper configurations of gemm_wgmma.cuh (one instantiation per entry of kWgmmaConfigs,
// 16-bit dtype and operand layout, and per entry of kWgmmaTf32Configs for float32), their
// tensor maps, and the host launchers that pick one.
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
#include "core/build_info.hpp"
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

// How a launch cuts K: `splits` ranges, their float32 partials in `partials`; or, for a
// stream-K configuration, its slots in `partials` and its flags in `counters`.
struct Split {
  int splits = 1;
  float* partials = nullptr;
  unsigned* counters = nullptr;
};

template <class T, std::size_t I, bool kAMajorM, bool kBMajorN>
cudaError_t launch_config(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, int k, Split split,
                          cudaStream_t stream) {
  if constexpr (kWgmmaConfigs[I].cluster > 1 && !kBMajorN)
    throw std::invalid_argument("gemm wgmma_" + kWgmmaConfigs[I].name() + ": pairs multicast B as given (N-major), not B^T");
  else if constexpr (kWgmmaConfigs[I].streamk && (kAMajorM || !kBMajorN))  // not instantiated: the forward's alone
    throw std::invalid_argument("gemm wgmma_" + kWgmmaConfigs[I].name() + ": stream-K takes A and B as given");
  else
    return launch_wgmma_gemm<T, kWgmmaConfigs[I], kAMajorM, kBMajorN>(
      a.as<const T>(), a.row_stride, b.as<const T>(), b.row_stride, c.as<T>(), static_cast<int>(c.rows),
      static_cast<int>(c.cols), k, current_device_limits().sms, stream, split.splits, split.partials, split.counters);
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

// B^T's row stride in the tf32 launcher's workspace: K rounded up to whole 16-byte chunks, as
// TMA's strides must be.
std::int64_t transposed_stride(std::int64_t k) { return (k + 3) / 4 * 4; }
std::size_t transposed_bytes(std::int64_t n, std::int64_t k) {
  return static_cast<std::size_t>(n) * static_cast<std::size_t>(transposed_stride(k)) * sizeof(float);
}
// Where split-K's partials start in that workspace: after B^T, on a 256-byte boundary.
std::size_t partials_offset(std::int64_t n, std::int64_t k) { return (transposed_bytes(n, k) + 255) / 256 * 256; }

// bt [N, K] (row stride ldbt) = B^T for B [K, N] (row stride ldb), in 32 x 32 tiles through
// shared memory, so that a warp reads 32 consecutive floats of a row of B and writes 32 of a row
// of B^T. blockIdx.x walks N's tiles, blockIdx.y (strided by the grid) K's.
__global__ void transpose_kernel(const float* __restrict__ b, std::int64_t ldb, float* __restrict__ bt,
                                 std::int64_t ldbt, int k, int n) {
  __shared__ float tile[32][33];  // +1: a column of the tile touches all 32 banks
  const int n0 = static_cast<int>(blockIdx.x) * 32;
  for (int k0 = static_cast<int>(blockIdx.y) * 32; k0 < k; k0 += static_cast<int>(gridDim.y) * 32) {
    for (int r = static_cast<int>(threadIdx.y); r < 32; r += 8) {
      const int row = k0 + r, col = n0 + static_cast<int>(threadIdx.x);
      if (row < k && col < n) tile[r][threadIdx.x] = b[static_cast<std::int64_t>(row) * ldb + col];
    }
    __syncthreads();
    for (int r = static_cast<int>(threadIdx.y); r < 32; r += 8) {
      const int row = n0 + r, col = k0 + static_cast<int>(threadIdx.x);
      if (row < n && col < k) bt[static_cast<std::int64_t>(row) * ldbt + col] = tile[threadIdx.x][r];
    }
    __syncthreads();  // before the next K tile overwrites it
  }
}

template <std::size_t... I>
cudaError_t launch_tf32_indexed(std::size_t index, const DeviceTensor& a, const float* bt, std::int64_t ldbt,
                                const DeviceTensor& c, int k, Split split, cudaStream_t stream,
                                std::index_sequence<I...>) {
  cudaError_t result = cudaErrorInvalidValue;
  ((index == I ? (result = launch_wgmma_gemm<float, kWgmmaTf32Configs[I], false, false>(
                      a.as<const float>(), a.row_stride, bt, ldbt, c.as<float>(), static_cast<int>(c.rows),
                      static_cast<int>(c.cols), k, current_device_limits().sms, stream, split.splits, split.partials),
                  true)
               : false) ||
   ...);
  return result;
}

}  // namespace

CUtensorMap make_operand_map(const void* base, CUtensorMapDataType type, int element_bytes, std::int64_t rows,
                             std::int64_t cols, std::int64_t row_stride, int box_rows, int box_cols) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride * element_bytes)};  // bytes, of the outer dimension
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
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
    if (p.major != 9 || p.minor != 0) {
      why = "needs an sm_90 device (wgmma and TMA); this one is sm_" + std::to_string(p.major) + std::to_string(p.minor);
      return;
    }
    // On sm_90 the kernels still need the "a" target: built for plain sm_90 they compile to a
    // trap (KBENCH_HOPPER_DEVICE_CODE, hopper_ptx.cuh), and the runtime cannot tell the two apart.
    const auto& archs = build_info().architectures;
    if (std::none_of(archs.begin(), archs.end(), [](const std::string& a) { return a.rfind("90a", 0) == 0; }))
      why = "needs code built for sm_90a (wgmma, setmaxnreg); this build has " + architectures_text(archs) +
            " (CMAKE_CUDA_ARCHITECTURES)";
  });
  return why;
}

std::string wgmma_path(const DeviceTensor& a, const DeviceTensor& b, std::int64_t k) {
  return k > 0 && rows_aligned16(a) && rows_aligned16(b) ? "wgmma" : "simt";
}

namespace {
// K cut into as many ranges as `tiles` tiles need to fill `sms` multiprocessors about once, each
// range at least 4 k-tiles (256 of K) long, at most 16: the forward's split-K and the swapped
// product's alike.
int k_ranges_to_fill(std::int64_t tiles, std::int64_t k, int sms) {
  const std::int64_t k_tiles = (k + 63) / 64;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({sms / tiles, k_tiles / 4, 16})));
}
}  // namespace

int wgmma_splits(std::int64_t m, std::int64_t n, std::int64_t k, int bn, int sms) {
  const std::int64_t tiles = wgmma_tiles(WgmmaConfig{bn, 1}, m, n);
  return 2 * tiles >= sms ? 1 : k_ranges_to_fill(tiles, k, sms);
}

int wgmma_swap_splits(std::int64_t m, std::int64_t n, std::int64_t k, int sms) {
  return k_ranges_to_fill(wgmma_swap_tiles(wgmma_swap_config(m), m, n), k, sms);
}

namespace {
std::size_t swap_slice_bytes(std::int64_t m, std::int64_t n) { return static_cast<std::size_t>(m * n) * sizeof(float); }
// Where the counters start in a workspace of that many bytes: its last whole unsigneds.
std::size_t swap_counters_offset(std::int64_t m, std::int64_t n, std::size_t workspace_bytes) {
  return (workspace_bytes - wgmma_swap_counters_bytes(m, n)) / sizeof(unsigned) * sizeof(unsigned);
}
}  // namespace

std::size_t wgmma_swap_counters_bytes(std::int64_t m, std::int64_t n) {
  return static_cast<std::size_t>(wgmma_swap_tiles(wgmma_swap_config(m), m, n)) * sizeof(unsigned);
}

int wgmma_swap_workspace_splits(std::int64_t m, std::int64_t n, std::int64_t k, int sms, std::size_t workspace_bytes) {
  const std::size_t slice = swap_slice_bytes(m, n);
  if (workspace_bytes < slice) return 0;
  const int wanted = wgmma_swap_splits(m, n, k, sms);
  // Several splits need the counters at the end and the slices before them; one needs neither.
  const std::size_t counters = wgmma_swap_counters_bytes(m, n);
  const std::size_t fit = workspace_bytes > counters ? swap_counters_offset(m, n, workspace_bytes) / slice : 0;
  const int held = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(wanted), fit));
  return held >= 2 ? held : 1;
}

std::size_t wgmma_swap_partials_bytes(std::int64_t m, std::int64_t n, std::int64_t k) {
  if (!hopper_problem().empty() || k == 0) return 0;
  return static_cast<std::size_t>(wgmma_swap_splits(m, n, k, current_device_limits().sms)) * swap_slice_bytes(m, n);
}

std::size_t wgmma_swap_workspace_bytes(std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::size_t partials = wgmma_swap_partials_bytes(m, n, k);
  return partials + (partials > swap_slice_bytes(m, n) ? wgmma_swap_counters_bytes(m, n) : 0);
}

namespace {
// launch_wgmma_swap at configuration W (a template argument: one instantiation a configuration).
template <WgmmaConfig W>
cudaError_t launch_swap_typed(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, int m, int n, int k,
                              int sms, cudaStream_t stream, int splits, float* partials, unsigned* counters) {
  if (a.dtype == DType::f16)
    return launch_wgmma_swap<__half, W>(a.as<const __half>(), a.row_stride, b.as<const __half>(), b.row_stride,
                                        c.as<__half>(), c.row_stride, m, n, k, sms, stream, splits, partials, counters);
  return launch_wgmma_swap<__nv_bfloat16, W>(a.as<const __nv_bfloat16>(), a.row_stride, b.as<const __nv_bfloat16>(),
                                             b.row_stride, c.as<__nv_bfloat16>(), c.row_stride, m, n, k, sms, stream,
                                             splits, partials, counters);
}
}  // namespace

void launch_wgmma_swap(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, cudaStream_t stream,
                       void* workspace, std::size_t workspace_bytes) {
  if (std::string why = hopper_problem(); !why.empty()) throw std::invalid_argument("gemm wgmma_swap: " + why);
  if (a.dtype == DType::f32) throw std::invalid_argument("gemm wgmma_swap: takes float16 or bfloat16");
  check_gemm(a, b, c);
  // Its grid is of the swapped product: 128-row tiles of N by bn-column ones of M.
  if (std::string why = grid_problem(c.cols, c.rows, WgmmaConfig::kBM, wgmma_swap_config(c.rows).bn); !why.empty())
    throw std::invalid_argument("gemm wgmma_swap: " + why);
  const std::int64_t k = a.cols;
  if (wgmma_path(a, b, k) != "wgmma") return launch_simt(a, b, c, stream);
  // As many splits as the heuristic wants and the workspace holds (the partials from its start,
  // the tiles' counters at its end, where auto's other candidates, whose partials share the
  // workspace from its start, never write); one slice at least.
  const int sms = current_device_limits().sms;
  const std::size_t bytes = workspace == nullptr ? 0 : workspace_bytes;
  const int splits = wgmma_swap_workspace_splits(c.rows, c.cols, k, sms, bytes);
  if (splits < 1)
    throw std::invalid_argument("gemm wgmma_swap: needs " + std::to_string(swap_slice_bytes(c.rows, c.cols)) +
                                " bytes of workspace for its float32 partials, has " + std::to_string(bytes));
  const int m = static_cast<int>(c.rows), n = static_cast<int>(c.cols), kk = static_cast<int>(k);
  auto* const partials = static_cast<float*>(workspace);
  auto* const counters = splits > 1 ? reinterpret_cast<unsigned*>(static_cast<char*>(workspace) +
                                                                  swap_counters_offset(c.rows, c.cols, bytes))
                                    : nullptr;
  // wgmma_swap_config(m) picks; each configuration is its own instantiation.
  KB_CUDA(wgmma_swap_config(m) == kWgmmaSwapNarrowConfig
              ? launch_swap_typed<kWgmmaSwapNarrowConfig>(a, b, c, m, n, kk, sms, stream, splits, partials, counters)
              : launch_swap_typed<kWgmmaSwapConfig>(a, b, c, m, n, kk, sms, stream, splits, partials, counters));
}

namespace {
// The tiles a stream-K configuration cuts on this device (its grid: one block a multiprocessor;
// k-steps of 64 16-bit elements), and its blocks where it cuts any (0 where it does not).
int stream_k_cut_tiles(const WgmmaConfig& w, std::int64_t m, std::int64_t n, std::int64_t k) {
  return w.streamk && k > 0 ? stream_k_tiles(wgmma_tiles(w, m, n), current_device_limits().sms, static_cast<int>((k + 63) / 64))
                            : 0;
}
int stream_k_blocks(const WgmmaConfig& w, std::int64_t m, std::int64_t n, std::int64_t k) {
  return stream_k_cut_tiles(w, m, n, k) > 0 ? current_device_limits().sms : 0;
}
std::size_t stream_k_slot_bytes(const WgmmaConfig& w) {
  return static_cast<std::size_t>(WgmmaConfig::kBM) * static_cast<std::size_t>(w.bn) * sizeof(float);
}
}  // namespace

int wgmma_stream_k_tiles(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (index >= kWgmmaConfigs.size() || !hopper_problem().empty()) return 0;
  return stream_k_cut_tiles(kWgmmaConfigs[index], m, n, k);
}

std::size_t wgmma_counters_bytes(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (index >= kWgmmaConfigs.size() || !hopper_problem().empty()) return 0;
  return static_cast<std::size_t>(stream_k_blocks(kWgmmaConfigs[index], m, n, k)) * sizeof(unsigned);
}

std::size_t wgmma_workspace_bytes(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k) {
  // The cluster's split-K (ksplit) sums in shared memory: no workspace.
  if (index >= kWgmmaConfigs.size() || kWgmmaConfigs[index].ksplit > 1 || !hopper_problem().empty()) return 0;
  if (kWgmmaConfigs[index].streamk)
    return static_cast<std::size_t>(stream_k_blocks(kWgmmaConfigs[index], m, n, k)) *
           (stream_k_slot_bytes(kWgmmaConfigs[index]) + sizeof(unsigned));
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
  if (index < kWgmmaConfigs.size() && kWgmmaConfigs[index].streamk && hopper_problem().empty()) {
    // The slots from the workspace's start, the flags at its end (where auto's workspace keeps
    // its candidates' counters: auto_workspace, gemm_family.cpp).
    const int blocks = stream_k_blocks(kWgmmaConfigs[index], c.rows, c.cols, a.cols);
    const std::size_t slots = static_cast<std::size_t>(blocks) * stream_k_slot_bytes(kWgmmaConfigs[index]),
                      flags = static_cast<std::size_t>(blocks) * sizeof(unsigned);
    if (blocks > 0 && (workspace == nullptr || workspace_bytes < slots + flags))
      throw std::invalid_argument("gemm wgmma_" + kWgmmaConfigs[index].name() + ": needs " +
                                  std::to_string(slots + flags) + " bytes of workspace for stream-K, has " +
                                  std::to_string(workspace == nullptr ? 0 : workspace_bytes));
    if (blocks > 0)
      split = Split{1, static_cast<float*>(workspace),
                    reinterpret_cast<unsigned*>(static_cast<char*>(workspace) +
                                                (workspace_bytes - flags) / sizeof(unsigned) * sizeof(unsigned))};
  } else if (index < kWgmmaConfigs.size() && kWgmmaConfigs[index].ksplit == 1 && hopper_problem().empty()) {
    // As many splits as the heuristic wants and the workspace holds (1: none).
    const std::size_t slice = static_cast<std::size_t>(c.rows * c.cols) * sizeof(float);
    const int wanted = wgmma_splits(c.rows, c.cols, a.cols, kWgmmaConfigs[index].bn, current_device_limits().sms);
    const auto fits = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(wanted), workspace_bytes / slice));
    if (fits > 1 && workspace != nullptr) split = Split{fits, static_cast<float*>(workspace)};
  }
  launch_checked(index, a, false, b, false, c, split, stream);
}

std::size_t wgmma_tf32_workspace_bytes(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (index >= kWgmmaTf32Configs.size() || !hopper_problem().empty() || k == 0) return 0;
  const int splits = wgmma_splits(m, n, k, kWgmmaTf32Configs[index].bn, current_device_limits().sms);
  const std::size_t partials = splits > 1 ? static_cast<std::size_t>(splits) * static_cast<std::size_t>(m * n) * sizeof(float) : 0;
  return partials_offset(n, k) + partials;
}

int wgmma_tf32_splits(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k, std::size_t workspace_bytes) {
  const std::size_t offset = partials_offset(n, k), slice = static_cast<std::size_t>(m * n) * sizeof(float);
  if (index >= kWgmmaTf32Configs.size() || !hopper_problem().empty() || workspace_bytes <= offset) return 1;
  const int wanted = wgmma_splits(m, n, k, kWgmmaTf32Configs[index].bn, current_device_limits().sms);
  const auto fits = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(wanted), (workspace_bytes - offset) / slice));
  return std::max(fits, 1);
}

void launch_wgmma_tf32(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                       cudaStream_t stream, void* workspace, std::size_t workspace_bytes) {
  if (index >= kWgmmaTf32Configs.size())
    throw std::invalid_argument("gemm: no wgmma tf32 configuration " + std::to_string(index));
  if (std::string why = hopper_problem(); !why.empty()) throw std::invalid_argument("gemm wgmma_tf32: " + why);
  if (a.dtype != DType::f32) throw std::invalid_argument("gemm wgmma_tf32: takes float32 inputs");
  check_gemm(a, b, c);
  const WgmmaConfig& w = kWgmmaTf32Configs[index];
  if (std::string why = grid_problem(c.rows, c.cols, WgmmaConfig::kBM, w.bn); !why.empty())
    throw std::invalid_argument("gemm wgmma_tf32_" + w.name() + ": " + why);
  const std::int64_t k = a.cols;
  if (wgmma_tf32_path(a, k) != "wgmma_tf32") return launch_simt(a, b, c, stream);
  // wgmma reads tf32 operands K-major only: B [K, N] goes to the workspace as B^T [N, K] first
  // (any row stride of B), part of every launch and of its time.
  const std::size_t bt_bytes = transposed_bytes(c.cols, k);
  if (workspace == nullptr || workspace_bytes < bt_bytes)
    throw std::invalid_argument("gemm wgmma_tf32: needs " + std::to_string(bt_bytes) + " bytes of workspace for B^T, has " +
                                std::to_string(workspace == nullptr ? 0 : workspace_bytes));
  auto* const bt = static_cast<float*>(workspace);
  const std::int64_t ldbt = transposed_stride(k);
  const long long k_tiles = (k + 31) / 32;
  const dim3 grid(static_cast<unsigned>((c.cols + 31) / 32), static_cast<unsigned>(k_tiles < 65535 ? k_tiles : 65535));
  transpose_kernel<<<grid, dim3(32, 8), 0, stream>>>(b.as<const float>(), b.row_stride, bt, ldbt, static_cast<int>(k),
                                                     static_cast<int>(c.cols));
  KB_CUDA(cudaGetLastError());
  Split split;
  split.splits = wgmma_tf32_splits(index, c.rows, c.cols, k, workspace_bytes);
  if (split.splits > 1) split.partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + partials_offset(c.cols, k));
  KB_CUDA(launch_tf32_indexed(index, a, bt, ldbt, c, static_cast<int>(k), split, stream,
                              std::make_index_sequence<kWgmmaTf32Configs.size()>{}));
}

std::string wgmma_tf32_path(const DeviceTensor& a, std::int64_t k) {
  return k > 0 && rows_aligned16(a) ? "wgmma_tf32" : "simt";
}

}  // namespace kbench::gemm
