// The gemm family's registration: the op, then its variants from simple to fast, then the
// cuBLAS baselines.
//   simt           float32 FMAs on CUDA cores, any dtype: the exact float32 path
//   tf32           float32 through tf32 tensor-core products, float32 sums, held to tf32's
//                  tolerance, as its name says; the plan choosing by device: wgmma_tf32's first
//                  configuration on sm_90, tf32_'s first elsewhere
//   tf32_<BM>x<BN> mma.sync m16n8k8 at each of kTf32Configs
//   wgmma_tf32_<BM>x<BN> the Hopper kernel's tf32 instantiation at each of kWgmmaTf32Configs
//                  (B transposed into the workspace first), sm_90 devices only
//   mma_<BM>x<BN>  the tensor-core kernel at one tile configuration (kTileConfigs), 16-bit
//   wgmma_<BM>x<BN> the Hopper kernel (wgmma, TMA, warp specialisation) at one configuration
//                  (kWgmmaConfigs), 16-bit, sm_90 devices only
//   wgmma_swap     the Hopper kernel on the swapped product C^T = B^T . A^T (wgmma_swap_config:
//                  N fills wgmma's rows, M is its N), C^T's tile stored transposed into C from
//                  registers at one split; at several, float32 partials summed in order and
//                  stored transposed into C by each tile's last unit, in the same kernel: for
//                  decode shapes (M = 1 to 128), correct at any M; 16-bit, sm_90 only
//   auto           the configuration the autotuner chose for the case's (device, dtype,
//                  M/N/K power-of-two bucket) among the mma.sync tiles and, on sm_90 devices,
//                  the wgmma ones and wgmma_swap: the plan choosing by device; recorded in the plan
//   cublas, cublas_best, cublas_tf32, cublas_best_tf32: cublasLt (gemm_cublas.hpp)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "device/device_limits.hpp"
#include "harness/l2_flush.hpp"
#include "kernels/gemm/gemm_autotune.hpp"
#include "kernels/gemm/gemm_contract.hpp"
#include "kernels/gemm/gemm_cublas.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_op.hpp"
#include "kernels/gemm/gemm_tiles.hpp"

namespace kbench::gemm {

namespace {

using Unsupported = std::function<std::string(const Case&)>;

Unsupported needs(bool sixteen_bit, bool float32) {
  return [=](const Case& c) {
    if (std::string why = gemm_case_problem(c); !why.empty()) return why;
    if (c.dtype == DType::f32 && !float32) return std::string("float32 runs on simt, the tf32 variants (tf32, tf32_*, wgmma_tf32_*) or the cuBLAS ones");
    if (c.dtype != DType::f32 && !sixteen_bit) return std::string("takes float32 only");
    return std::string();
  };
}

// splits: the K ranges launch_wgmma cuts the case into (gemm_wgmma.cuh), given its workspace;
// bk: 64 16-bit elements or 32 float32 ones (128 bytes either way); stream_k_tiles: the tiles a
// stream-K configuration shares out among its blocks (absent for the others).
std::string wgmma_plan(const WgmmaConfig& w, const std::string& path, int splits, int bk = 64, int stream_k = 0) {
  return "{\"path\": \"" + path + "\", \"tile\": \"" + w.name() + "\", \"bk\": " + std::to_string(bk) + ", \"splits\": " +
         std::to_string(splits) + (w.streamk ? ", \"stream_k_tiles\": " + std::to_string(stream_k) : "") +
         ", \"stages\": " +
         std::to_string(w.stages) + ", \"epilogue\": \"" +
         (w.ksplit > 1 ? "cluster_dsmem_split_sum" : w.direct ? "registers" : "tma_store") +
         "\", \"consumer_warpgroups\": 2, \"cluster\": " + std::to_string(w.cluster) +
         ", \"grid\": \"persistent\", \"group_m\": " +
         std::to_string(kGroupM) + "}";
}

// The contiguous operands of a case, as the harness allocates them: the path launch_wgmma takes.
std::string wgmma_case_path(const Case& c) { return k_of(c) > 0 && mma_path(c) == "mma" ? "wgmma" : "simt"; }

std::size_t wgmma_workspace(std::size_t i, const Case& c) { return wgmma_workspace_bytes(i, m_of(c), n_of(c), k_of(c)); }

// The splits of configuration i on case c with its workspace (1 off the wgmma path).
int wgmma_case_splits(std::size_t i, const Case& c) {
  if (kWgmmaConfigs[i].ksplit > 1) return wgmma_case_path(c) == "wgmma" ? kWgmmaConfigs[i].ksplit : 1;
  if (kWgmmaConfigs[i].streamk) return 1;
  const std::size_t bytes = wgmma_workspace(i, c);
  if (bytes == 0 || wgmma_case_path(c) != "wgmma") return 1;
  return static_cast<int>(bytes / (static_cast<std::size_t>(m_of(c) * n_of(c)) * sizeof(float)));
}

// The tiles a stream-K configuration shares out on case c (0 off the wgmma path, or where its
// tiles make whole waves).
int wgmma_case_stream_k_tiles(std::size_t i, const Case& c) {
  return wgmma_case_path(c) == "wgmma" ? wgmma_stream_k_tiles(i, m_of(c), n_of(c), k_of(c)) : 0;
}

std::string wgmma_case_plan(std::size_t i, const Case& c) {
  return wgmma_plan(kWgmmaConfigs[i], wgmma_case_path(c), wgmma_case_splits(i, c), 64, wgmma_case_stream_k_tiles(i, c));
}

// The swapped product: its workspace (the float32 partials, one slice at least, then the tiles'
// counters where it splits K) and plan.
std::size_t wgmma_swap_workspace(const Case& c) { return wgmma_swap_workspace_bytes(m_of(c), n_of(c), k_of(c)); }

std::string wgmma_swap_case_plan(const Case& c) {
  const std::string path = wgmma_case_path(c) == "wgmma" ? "wgmma_swap" : "simt";
  const int splits = path == "wgmma_swap" ? wgmma_swap_workspace_splits(m_of(c), n_of(c), k_of(c),
                                                                        current_device_limits().sms, wgmma_swap_workspace(c))
                                          : 1;
  const WgmmaConfig w = wgmma_swap_config(m_of(c));
  std::string plan = wgmma_plan(w, path, splits);
  plan.pop_back();
  return plan + ", \"product\": \"C^T = B^T.A^T: tiles of 128 rows of N by " + std::to_string(w.bn) +
         " columns of M\", \"reduce\": " +
         (splits == 1 ? "\"none: one split, the kernel stores C^T's tile transposed into C\"}"
                      : "\"in-kernel: float32 partials [splits][N][M]; each tile's last unit (a done-counter a "
                        "tile) sums them in split order and stores the sum transposed into C\"}");
}

// auto counts the swapped product among its candidates up to M = 256 (bucket 8): beyond it the
// forward's 128-row tiles of M are full, and the swap's partials (M x N floats a split) would
// only cost memory.
constexpr std::int64_t kSwapCandidateMaxM = 256;

// The workspace auto's wgmma candidates share: the largest of their partials (or stream-K
// slots), which each writes from the start, then the largest of their counters (the swapped
// product's, where it splits K; the stream-K blocks' flags), which each keeps at the end and
// leaves zero, so that no candidate's partials ever reach another's counters (0 where there are
// no candidates).
std::size_t auto_workspace(const Case& c) {
  std::size_t most = 0, counters = 0;
  if (m_of(c) <= kSwapCandidateMaxM) {
    most = wgmma_swap_partials_bytes(m_of(c), n_of(c), k_of(c));
    counters = wgmma_swap_workspace(c) - most;
  }
  for (std::size_t i = 0; i < kWgmmaConfigs.size(); ++i) {
    const std::size_t flags = wgmma_counters_bytes(i, m_of(c), n_of(c), k_of(c));
    most = std::max(most, wgmma_workspace(i, c) - flags);
    counters = std::max(counters, flags);
  }
  return most + counters;
}

// The tf32 instantiation: its path for the harness's contiguous A (rows of K floats), its workspace
// (B^T, then split-K's partials) and its plan.
std::string wgmma_tf32_case_path(const Case& c) { return k_of(c) > 0 && k_of(c) % 4 == 0 ? "wgmma_tf32" : "simt"; }
std::size_t wgmma_tf32_workspace(std::size_t i, const Case& c) {
  return wgmma_tf32_workspace_bytes(i, m_of(c), n_of(c), k_of(c));
}
std::string wgmma_tf32_case_plan(std::size_t i, const Case& c) {
  const std::string path = wgmma_tf32_case_path(c);
  const int splits = path == "wgmma_tf32" ? wgmma_tf32_splits(i, m_of(c), n_of(c), k_of(c), wgmma_tf32_workspace(i, c)) : 1;
  std::string plan = wgmma_plan(kWgmmaTf32Configs[i], path, splits, 32);
  plan.pop_back();
  return plan + ", \"b\": \"transposed into the workspace\"}";
}

std::string tile_plan(const TileConfig& t, const std::string& path) {
  return "{\"path\": \"" + path + "\", \"tile\": \"" + t.name() + "\", \"bk\": " + std::to_string(t.bk) +
         ", \"warp\": \"" + std::to_string(t.wm) + "x" + std::to_string(t.wn) + "\", \"stages\": " +
         std::to_string(t.stages) + ", \"group_m\": " + std::to_string(kGroupM) + "}";
}

// auto's candidates: kTileConfigs, then on sm_90 devices kWgmmaConfigs (index - kTileConfigs.size())
// and the swapped product (the last; up to kSwapCandidateMaxM).
constexpr std::size_t kSwapCandidate = kTileConfigs.size() + kWgmmaConfigs.size();
std::size_t auto_candidates() { return hopper_problem().empty() ? kSwapCandidate + 1 : kTileConfigs.size(); }

void launch_candidate(std::size_t i, const LaunchArgs& x) {
  if (i < kTileConfigs.size()) launch_mma(i, x.inputs[0], x.inputs[1], x.outputs[0], x.stream);
  else if (i == kSwapCandidate)
    launch_wgmma_swap(x.inputs[0], x.inputs[1], x.outputs[0], x.stream, x.workspace, auto_workspace(x.c));
  else
    launch_wgmma(i - kTileConfigs.size(), x.inputs[0], x.inputs[1], x.outputs[0], x.stream, x.workspace,
                 auto_workspace(x.c));
}

// The L2 flusher the tuner runs before each timed launch, one per device for the process's life
// (twice the L2: 120 MiB on an H200).
const L2Flusher& tuning_flusher() {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<L2Flusher>> flushers;
  int device = 0;
  KB_CUDA(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<L2Flusher>& f = flushers[device];
  if (!f) f = std::make_unique<L2Flusher>(current_device_limits().l2_bytes);
  return *f;
}

// Candidate i's time on the case's buffers: the median of tuning_samples() launches, each after an
// L2 flush (cold), following a launch that warms it (lazy loading, its shared-memory limit); -1
// when it cannot run. Cold, whatever the run's cache mode: a decode step's weights come from HBM,
// and a warm timing misleads there. Timed warm (one launch, as before session 20), the tuner
// picked wgmma_128x128 for bfloat16 1x4096x4096, whose operands (32 MiB) fit in the L2, while
// cold it took 18.8 us against wgmma_swap's 13.8 (sweep-20261204T173556Z-0b55a0).
double time_config(std::size_t i, const LaunchArgs& x) {
  if (i == kSwapCandidate && x.outputs[0].rows > kSwapCandidateMaxM) return -1;
  // The cluster's split-K (ksplit) only where the reduce kernel's would split: where the tiles
  // leave most multiprocessors idle (a decode step's M); elsewhere it would only cut K needlessly.
  if (i >= kTileConfigs.size() && i < kSwapCandidate) {
    const WgmmaConfig& w = kWgmmaConfigs[i - kTileConfigs.size()];
    if (w.ksplit > 1 && wgmma_splits(x.outputs[0].rows, x.outputs[0].cols, x.inputs[0].cols, w.bn,
                                     current_device_limits().sms) == 1)
      return -1;
    // Stream-K only where it cuts tiles: elsewhere it is its tile without it.
    if (w.streamk && wgmma_stream_k_tiles(i - kTileConfigs.size(), x.outputs[0].rows, x.outputs[0].cols,
                                          x.inputs[0].cols) == 0)
      return -1;
  }
  try {
    launch_candidate(i, x);
    const L2Flusher& flusher = tuning_flusher();
    cudaEvent_t start, stop;
    KB_CUDA(cudaEventCreate(&start));
    KB_CUDA(cudaEventCreate(&stop));
    std::vector<float> ms(static_cast<std::size_t>(tuning_samples()));
    for (float& sample : ms) {
      flusher.flush(x.stream);
      KB_CUDA(cudaEventRecord(start, x.stream));
      launch_candidate(i, x);
      KB_CUDA(cudaEventRecord(stop, x.stream));
      KB_CUDA(cudaEventSynchronize(stop));
      KB_CUDA(cudaEventElapsedTime(&sample, start, stop));
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return 1e3 * ms[ms.size() / 2];
  } catch (const CudaError&) {  // cannot launch here (its shared memory, say)
    return -1;
  } catch (const std::invalid_argument&) {  // its grid cannot cover the case
    return -1;
  }
}

int current_device() {
  int d = 0;
  KB_CUDA(cudaGetDevice(&d));
  return d;
}

void launch_auto(const LaunchArgs& x) {
  const DeviceTensor &a = x.inputs[0], &b = x.inputs[1], &c = x.outputs[0];
  if (mma_path(a, b) != "mma") return launch_simt(a, b, c, x.stream);
  check_gemm(a, b, c);
  const TuneKey key = tune_key(current_device(), a.dtype, c.rows, c.cols, a.cols);
  const TuneChoice choice = gemm_autotuner().choose(key, auto_candidates(), {c.rows, c.cols, a.cols},
                                                    [&](std::size_t i) { return time_config(i, x); });
  launch_candidate(choice.config, x);
}

std::string auto_plan(const Case& c) {
  if (mma_path(c) != "mma") return "{\"path\": \"simt\"}";
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return "";
  const TuneKey key = tune_key(device, c.dtype, m_of(c), n_of(c), k_of(c));
  TuneChoice choice;
  if (!gemm_autotuner().find(key, choice)) return "";
  std::string plan = choice.config < kTileConfigs.size() ? tile_plan(kTileConfigs[choice.config], "mma")
                     : choice.config == kSwapCandidate   ? wgmma_swap_case_plan(c)
                                                         : wgmma_case_plan(choice.config - kTileConfigs.size(), c);
  plan.pop_back();
  return plan + ", \"bucket\": [" + std::to_string(key.bucket[0]) + ", " + std::to_string(key.bucket[1]) + ", " +
         std::to_string(key.bucket[2]) + "], \"tuned_on\": [" + std::to_string(choice.tuned_on[0]) + ", " +
         std::to_string(choice.tuned_on[1]) + ", " + std::to_string(choice.tuned_on[2]) + "]}";
}

Variant cublas_variant(const char* name, const char* summary, CublasPick pick, CublasMath math) {
  Variant v = make_variant("gemm", name, summary, [pick, math](const LaunchArgs& x) {
    launch_cublas(pick, math, x.inputs[0], x.inputs[1], x.outputs[0], x.workspace, kCublasWorkspace, x.stream);
  });
  v.baseline = true;
  v.workspace_bytes = [](const Case&) { return kCublasWorkspace; };
  v.unsupported = needs(math == CublasMath::exact, true);
  v.plan = [pick, math](const Case& c) { return cublas_plan(pick, math, c); };
  if (math == CublasMath::tf32) v.tolerance = [](const Case& c, std::size_t) { return tf32_tolerance(k_of(c)); };
  return v;
}

}  // namespace

void register_gemm(Registry& r) {
  r.add_op(make_gemm_op());
  Variant simt = make_variant("gemm", "simt", "float32 FMAs on CUDA cores, 64x64 tiles, any alignment",
                              [](const LaunchArgs& x) { launch_simt(x.inputs[0], x.inputs[1], x.outputs[0], x.stream); });
  simt.unsupported = needs(true, true);
  r.add_variant(simt);

  // `tf32` runs the first configuration of the device's kernel; each configuration of both is
  // also a variant of its own, for the comparison.
  const auto tf32_plan = [](std::size_t i, const Case& c) {
    return tile_plan(kTf32Configs[i], mma_path(c) == "mma" ? "tf32" : "simt");
  };
  Variant tf32 = make_variant("gemm", "tf32",
                              "float32 via tf32 tensor-core products, float32 accumulation: wgmma_tf32_" +
                                  kWgmmaTf32Configs[0].name() + " on sm_90, tf32_" + kTf32Configs[0].name() + " elsewhere",
                              [](const LaunchArgs& x) {
                                if (hopper_problem().empty())
                                  launch_wgmma_tf32(0, x.inputs[0], x.inputs[1], x.outputs[0], x.stream, x.workspace,
                                                    wgmma_tf32_workspace(0, x.c));
                                else
                                  launch_tf32(0, x.inputs[0], x.inputs[1], x.outputs[0], x.stream);
                              });
  tf32.unsupported = needs(false, true);
  tf32.tolerance = [](const Case& c, std::size_t) { return tf32_tolerance(k_of(c)); };
  tf32.workspace_bytes = [](const Case& c) { return wgmma_tf32_workspace(0, c); };
  tf32.plan = [tf32_plan](const Case& c) { return hopper_problem().empty() ? wgmma_tf32_case_plan(0, c) : tf32_plan(0, c); };
  r.add_variant(tf32);
  for (std::size_t i = 0; i < kTf32Configs.size(); ++i) {
    Variant v = make_variant("gemm", "tf32_" + kTf32Configs[i].name(),
                             "float32 via tf32 mma.sync m16n8k8, float32 accumulation, tiles of " + kTf32Configs[i].name(),
                             [i](const LaunchArgs& x) { launch_tf32(i, x.inputs[0], x.inputs[1], x.outputs[0], x.stream); });
    v.unsupported = needs(false, true);
    v.tolerance = tf32.tolerance;
    v.plan = [i, tf32_plan](const Case& c) { return tf32_plan(i, c); };
    r.add_variant(v);
  }
  for (std::size_t i = 0; i < kWgmmaTf32Configs.size(); ++i) {
    const WgmmaConfig w = kWgmmaTf32Configs[i];
    Variant v = make_variant("gemm", "wgmma_tf32_" + w.name(),
                             "Hopper, float32 via tf32 wgmma: B transposed into the workspace, then the wgmma kernel's " +
                                 std::to_string(w.stages) + " TMA stages of 32 floats of K, C " +
                                 (w.direct ? "stored from registers" : "through shared memory and TMA"),
                             [i](const LaunchArgs& x) {
                               launch_wgmma_tf32(i, x.inputs[0], x.inputs[1], x.outputs[0], x.stream, x.workspace,
                                                 wgmma_tf32_workspace(i, x.c));
                             });
    v.unsupported = [](const Case& c) {
      if (std::string why = needs(false, true)(c); !why.empty()) return why;
      return hopper_problem();
    };
    v.tolerance = tf32.tolerance;
    v.workspace_bytes = [i](const Case& c) { return wgmma_tf32_workspace(i, c); };
    v.plan = [i](const Case& c) { return wgmma_tf32_case_plan(i, c); };
    r.add_variant(v);
  }

  for (std::size_t i = 0; i < kTileConfigs.size(); ++i) {
    const TileConfig t = kTileConfigs[i];
    Variant v = make_variant("gemm", "mma_" + t.name(),
                             "mma.sync tiles of " + t.name() + ", " + std::to_string(t.warps()) + " warps, " +
                                 std::to_string(t.stages) + " cp.async stages" +
                                 (t.fast ? ", software-pipelined mainloop (double-buffered fragments)" : ""),
                             [i](const LaunchArgs& x) { launch_mma(i, x.inputs[0], x.inputs[1], x.outputs[0], x.stream); });
    v.unsupported = needs(true, false);
    v.plan = [t](const Case& c) { return tile_plan(t, mma_path(c)); };
    r.add_variant(v);
  }

  for (std::size_t i = 0; i < kWgmmaConfigs.size(); ++i) {
    const WgmmaConfig w = kWgmmaConfigs[i];
    Variant v = make_variant("gemm", "wgmma_" + w.name(),
                             "Hopper: wgmma from TMA-loaded, 128-byte-swizzled stages (" + std::to_string(w.stages) +
                                 "), a producer and two consumer warpgroups, persistent grid, C " +
                                 (w.ksplit > 1 ? "from split-K in clusters of " + std::to_string(w.ksplit) +
                                                     " blocks, the float32 partial tiles summed through distributed "
                                                     "shared memory"
                                  : w.direct   ? "stored from registers"
                                               : "through shared memory and TMA") +
                                 (w.streamk ? "; stream-K: the last partial wave's tiles cut by K among all blocks, a "
                                              "cut tile's float32 partials added in block order by the block that "
                                              "holds its start"
                                            : ""),
                             [i](const LaunchArgs& x) {
                               launch_wgmma(i, x.inputs[0], x.inputs[1], x.outputs[0], x.stream, x.workspace,
                                            wgmma_workspace(i, x.c));
                             });
    v.workspace_bytes = [i](const Case& c) { return wgmma_workspace(i, c); };
    v.unsupported = [](const Case& c) {
      if (std::string why = needs(true, false)(c); !why.empty()) return why;
      return hopper_problem();
    };
    v.plan = [i](const Case& c) { return wgmma_case_plan(i, c); };
    r.add_variant(v);
  }

  Variant swap = make_variant("gemm", "wgmma_swap",
                              "Hopper, decode shapes: the wgmma kernel on C^T = B^T.A^T (tiles of 128 rows of N by " +
                                  std::to_string(kWgmmaSwapNarrowConfig.bn) + " of M up to M = " +
                                  std::to_string(kSwapNarrowMaxM) + ", " +
                                  std::to_string(kWgmmaSwapNarrowConfig.stages) + " TMA stages; by " +
                                  std::to_string(kWgmmaSwapConfig.bn) + ", " +
                                  std::to_string(kWgmmaSwapConfig.stages) +
                                  " stages beyond); C^T's tile stored transposed into C at one split of K; at "
                                  "several, float32 partials summed in order and stored transposed into C by each "
                                  "tile's last unit, in the same kernel",
                              [](const LaunchArgs& x) {
                                launch_wgmma_swap(x.inputs[0], x.inputs[1], x.outputs[0], x.stream, x.workspace,
                                                  wgmma_swap_workspace(x.c));
                              });
  swap.workspace_bytes = wgmma_swap_workspace;
  swap.unsupported = [](const Case& c) {
    if (std::string why = needs(true, false)(c); !why.empty()) return why;
    return hopper_problem();
  };
  swap.plan = wgmma_swap_case_plan;
  r.add_variant(swap);

  Variant tuned = make_variant("gemm", "auto", "the tile the autotuner chose for the M/N/K bucket (mma.sync, and wgmma on sm_90)",
                               launch_auto);
  tuned.unsupported = needs(true, false);
  tuned.plan = auto_plan;
  tuned.workspace_bytes = auto_workspace;
  r.add_variant(tuned);

  r.add_variant(cublas_variant("cublas", "cublasLt, the default heuristic's first algorithm", CublasPick::first,
                               CublasMath::exact));
  r.add_variant(cublas_variant("cublas_best", "cublasLt, the fastest of its top 16 heuristic candidates",
                               CublasPick::best, CublasMath::exact));
  r.add_variant(cublas_variant("cublas_tf32", "cublasLt with CUBLAS_COMPUTE_32F_FAST_TF32, first algorithm",
                               CublasPick::first, CublasMath::tf32));
  r.add_variant(cublas_variant("cublas_best_tf32", "cublasLt tf32, the fastest of its top 16 candidates",
                               CublasPick::best, CublasMath::tf32));
}

}  // namespace kbench::gemm
