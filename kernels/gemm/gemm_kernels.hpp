// Host entry points of the gemm kernels (gemm_mma.cu, gemm_simt.cu, gemm_tf32.cu), for the
// variants (gemm_family.cpp, gemm_autotune.cpp) and the tests. Each checks the contract
// (gemm_contract.hpp) first and throws std::invalid_argument on a breach; a CUDA error throws
// CudaError.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "harness/problem.hpp"

namespace kbench::gemm {

// C = A.B with tile configuration kTileConfigs[index] (16-bit dtypes). Operands whose rows are
// not 16-byte aligned cannot take cp.async's 16-byte copies: they go to launch_simt, and
// mma_path says so.
void launch_mma(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                cudaStream_t stream);
// "mma" or "simt": the path launch_mma takes for these operands.
std::string mma_path(const DeviceTensor& a, const DeviceTensor& b);
// The same for a contiguous case of the op (the harness's buffers: base pointers from
// cudaMalloc, row strides K and N).
std::string mma_path(const Case& c);

// C = op(A).op(B) with A given as A^T ([K, M] rows) when a_transposed, B as B^T ([N, K] rows)
// when b_transposed, at the tile configuration kBackwardConfig (16-bit dtypes; every stored row
// 16-byte aligned, else std::invalid_argument: there is no transposed SIMT path).
// 128x256_fast: the forward's fastest at 4096^3 and 8192^3 (both layouts need BM, BN >= 64).
inline constexpr std::size_t kBackwardConfig = 11;
void launch_mma_layout(const DeviceTensor& a, bool a_transposed, const DeviceTensor& b, bool b_transposed,
                       const DeviceTensor& c, cudaStream_t stream);

// C = A.B with the Hopper kernel (gemm_wgmma.cu: wgmma, TMA, warp specialisation) at
// kWgmmaConfigs[index], 16-bit dtypes on an sm_90 device (else std::invalid_argument, with
// hopper_problem's reason). Operands TMA cannot describe (rows not 16-byte aligned) and K = 0 go
// to launch_simt; wgmma_path says which. Shapes of too few tiles cut K into ranges (split-K,
// gemm_wgmma.cuh) as far as the workspace holds their float32 partials: wgmma_workspace_bytes.
void launch_wgmma(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                  cudaStream_t stream, void* workspace = nullptr, std::size_t workspace_bytes = 0);
// How many K ranges launch_wgmma cuts each tile's K into for an M x N x K product at tile width
// bn on `sms` multiprocessors: 1 when the tiles alone fill half the multiprocessors, else as many
// as fill them, each range at least 4 k-tiles (256) long, at most 16. Host code.
int wgmma_splits(std::int64_t m, std::int64_t n, std::int64_t k, int bn, int sms);
// The workspace launch_wgmma wants for an M x N x K product at configuration index on this
// device: 0 when it would not cut K. A stream-K configuration (WgmmaConfig::streamk) where
// wgmma_stream_k_tiles > 0 wants a slot of 128 x bn floats a block from the start, then
// the blocks' flags (zero between launches): wgmma_counters_bytes of them at the end, which
// launch_wgmma finds at the end of whatever workspace it is given. (Stream-K takes the place of
// split-K: those configurations never cut K alone. The forward's layout only: A and B as given.)
std::size_t wgmma_workspace_bytes(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k);
std::size_t wgmma_counters_bytes(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k);
// The tiles a stream-K configuration cuts by K for that product on this device (stream_k_tiles,
// gemm_tiles.hpp; 0 for the other configurations, or where the tiles fill whole waves).
int wgmma_stream_k_tiles(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k);
// The same with A given as A^T ([K, M] rows) and/or B as B^T ([N, K] rows), for the backward;
// transposed operands must have aligned rows (there is no transposed SIMT path); K = 0 zeroes C.
void launch_wgmma_layout(std::size_t index, const DeviceTensor& a, bool a_transposed, const DeviceTensor& b,
                         bool b_transposed, const DeviceTensor& c, cudaStream_t stream);
// C = A.B as the swapped product C^T = B^T . A^T on the Hopper kernel (launch_wgmma_swap in
// gemm_wgmma.cuh, configuration wgmma_swap_config(M): tiles of 128 rows of N by 16 or 64 columns
// of M, for decode shapes), K cut as wgmma_swap_workspace_splits says: at one split the kernel
// stores C^T's tiles transposed into C; at several each unit writes its float32 partial tile to
// the workspace and the tile's last unit sums them in split order and stores the sum transposed
// into C, in the same kernel. The workspace: the partials from its start (M x N floats a split),
// and, at several splits, a done-counter a tile at its end (wgmma_swap_counters_bytes), zero
// before the first launch and left zero by each; so every launch on one workspace must give the
// same workspace_bytes (where the counters lie depends on it). 16-bit dtypes on an sm_90 device (else
// std::invalid_argument); needs the workspace of one slice at least (M x N floats, else
// std::invalid_argument), used or not; operands wgmma_path sends elsewhere, and K = 0, go to
// launch_simt.
void launch_wgmma_swap(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, cudaStream_t stream,
                       void* workspace, std::size_t workspace_bytes);
// How many K ranges the swapped product cuts an M x N x K product into on `sms`
// multiprocessors: as many as fill them about once with its ceil(N / 128) x ceil(M / bn) tiles
// (bn: wgmma_swap_config(M)'s; 1 from `sms` tiles on), each range at least 4 k-tiles (256) long,
// at most 16. Host code.
int wgmma_swap_splits(std::int64_t m, std::int64_t n, std::int64_t k, int sms);
// The K ranges launch_wgmma_swap takes with a workspace of that many bytes: wgmma_swap_splits'
// as far as the slices fit before the counters, 1 where fewer than two do (no counters then), 0
// below one slice (refused). Host code.
int wgmma_swap_workspace_splits(std::int64_t m, std::int64_t n, std::int64_t k, int sms, std::size_t workspace_bytes);
// The counters the swapped product keeps at the end of its workspace when it splits K: one
// unsigned a tile of wgmma_swap_config(M). Host code.
std::size_t wgmma_swap_counters_bytes(std::int64_t m, std::int64_t n);
// The partials launch_wgmma_swap writes for M x N x K on this device, from its workspace's
// start: its splits times M x N floats (0 off sm_90, and at K = 0).
std::size_t wgmma_swap_partials_bytes(std::int64_t m, std::int64_t n, std::int64_t k);
// The workspace it wants: the partials, then the counters where it splits K.
std::size_t wgmma_swap_workspace_bytes(std::int64_t m, std::int64_t n, std::int64_t k);
// "wgmma" or "simt": the path launch_wgmma takes for these operands and inner dimension.
std::string wgmma_path(const DeviceTensor& a, const DeviceTensor& b, std::int64_t k);
// Why this process's device cannot run the wgmma kernels (empty when it can); asked once.
std::string hopper_problem();

// C = A.B for float32 with the Hopper kernel's tf32 instantiation at kWgmmaTf32Configs[index]
// (sm_90 only, else std::invalid_argument): B is transposed into the workspace first (wgmma
// reads tf32 operands K-major only), then K is cut as wgmma_splits says, as far as the rest of
// the workspace holds the partials. A whose rows are not 16-byte aligned, and K = 0, go to
// launch_simt (wgmma_tf32_path says which).
void launch_wgmma_tf32(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                       cudaStream_t stream, void* workspace, std::size_t workspace_bytes);
// The workspace it wants for M x N x K (B^T, then the partials where it cuts K): 0 off sm_90.
std::size_t wgmma_tf32_workspace_bytes(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k);
// The K ranges it cuts M x N x K into with a workspace of that many bytes (1: none).
int wgmma_tf32_splits(std::size_t index, std::int64_t m, std::int64_t n, std::int64_t k, std::size_t workspace_bytes);
// "wgmma_tf32" or "simt": the path launch_wgmma_tf32 takes for A and the inner dimension.
std::string wgmma_tf32_path(const DeviceTensor& a, std::int64_t k);

// C = A.B in float32 FMAs, any dtype and alignment (guarded element loads): the exact float32
// path, and the fallback of the tensor-core kernels.
void launch_simt(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, cudaStream_t stream);

// C = A.B for float32 with tf32 tensor-core products (mma m16n8k8), float32 accumulation, at
// configuration kTf32Configs[index]; rows not 16-byte aligned go to launch_simt.
void launch_tf32(std::size_t index, const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c,
                 cudaStream_t stream);

}  // namespace kbench::gemm
