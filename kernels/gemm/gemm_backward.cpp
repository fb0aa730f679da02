// gemm_backward's registration: the op and its variants.
//   mma          both gradients through the tensor-core template at 128x128 tiles, the
//                transposed operand read where it lies (dA: B as B^T; dB: A as A^T), 16-bit
//                with rows on 16-byte boundaries; each gradient one launch, no atomics
//   wgmma        the same two products through the Hopper kernel at 128x256 (kWgmmaConfigs[0]),
//                the transposes as the operands' major order; sm_90 devices only
//   auto         wgmma on sm_90 devices, mma elsewhere
//   cublas, cublas_best: the same two products through cublasLt with TRANSA / TRANSB
#include <string>

#include "kernels/gemm/gemm_contract.hpp"
#include "kernels/gemm/gemm_cublas.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/gemm_op.hpp"

namespace kbench::gemm {

namespace {

bool wants_da(const Case& c) { return c.param("da") != 0; }
bool wants_db(const Case& c) { return c.param("db") != 0; }

std::string backward_problem(const Case& c) {
  if (std::string why = gemm_case_problem(c); !why.empty()) return why;
  if (c.shape[2] < 1) return "K must be at least 1 (there is no gradient of an empty product)";
  if (!wants_da(c) && !wants_db(c)) return "neither gradient asked for (da = db = 0)";
  return {};
}

// What the tensor-core variants (mma, wgmma) need beyond the op: 16-bit rows of whole 16-byte
// chunks (dC's and B's rows are N long, A's K long), for cp.async and TMA alike.
std::string tensor_core_problem(const Case& c) {
  if (std::string why = backward_problem(c); !why.empty()) return why;
  if (c.dtype == DType::f32) return std::string("float32 runs on the cuBLAS variants");
  if (n_of(c) % 8 != 0 || k_of(c) % 8 != 0) return std::string("N and K must be multiples of 8 (16-byte rows)");
  return std::string();
}

// The tensors of a launch, by what they are: dC first, then B and A as the flags add them.
struct Tensors {
  const DeviceTensor* dc = nullptr;
  const DeviceTensor* a = nullptr;
  const DeviceTensor* b = nullptr;
  const DeviceTensor* da = nullptr;
  const DeviceTensor* db = nullptr;
};

Tensors tensors_of(const LaunchArgs& x) {
  Tensors t{&x.inputs[0]};
  std::size_t in = 1, out = 0;
  if (wants_da(x.c)) t.b = &x.inputs[in++], t.da = &x.outputs[out++];
  if (wants_db(x.c)) t.a = &x.inputs[in++], t.db = &x.outputs[out++];
  return t;
}

Variant cublas_backward(const char* name, const char* summary, CublasPick pick) {
  Variant v = make_variant("gemm_backward", name, summary, [pick](const LaunchArgs& x) {
    const Tensors t = tensors_of(x);
    if (t.da) launch_cublas(pick, CublasMath::exact, *t.dc, *t.b, *t.da, x.workspace, kCublasWorkspace, x.stream, false, true);
    if (t.db) launch_cublas(pick, CublasMath::exact, *t.a, *t.dc, *t.db, x.workspace, kCublasWorkspace, x.stream, true, false);
  });
  v.baseline = true;
  v.workspace_bytes = [](const Case&) { return kCublasWorkspace; };
  v.unsupported = backward_problem;
  return v;
}

}  // namespace

void register_gemm_backward(Registry& r) {
  r.add_op(make_gemm_backward_op());
  Variant mma = make_variant("gemm_backward", "mma", "dA = dC.B^T, dB = A^T.dC: mma.sync 128x256, pipelined, transposes through strides",
                             [](const LaunchArgs& x) {
                               const Tensors t = tensors_of(x);
                               if (t.da) launch_mma_layout(*t.dc, false, *t.b, true, *t.da, x.stream);
                               if (t.db) launch_mma_layout(*t.a, true, *t.dc, false, *t.db, x.stream);
                             });
  mma.unsupported = tensor_core_problem;
  r.add_variant(mma);
  Variant wgmma = make_variant("gemm_backward", "wgmma", "dA = dC.B^T, dB = A^T.dC: the Hopper kernel 128x256, transposes as major order",
                               [](const LaunchArgs& x) {
                                 const Tensors t = tensors_of(x);
                                 if (t.da) launch_wgmma_layout(0, *t.dc, false, *t.b, true, *t.da, x.stream);
                                 if (t.db) launch_wgmma_layout(0, *t.a, true, *t.dc, false, *t.db, x.stream);
                               });
  wgmma.unsupported = [](const Case& c) {
    if (std::string why = tensor_core_problem(c); !why.empty()) return why;
    return hopper_problem();
  };
  r.add_variant(wgmma);
  // The plan choosing by device, as gemm's auto does: what gemm_step's auto runs after the forward.
  Variant tuned = make_variant("gemm_backward", "auto", "the Hopper kernel (wgmma) on sm_90 devices, mma elsewhere",
                               [](const LaunchArgs& x) {
                                 const Tensors t = tensors_of(x);
                                 const bool hopper = hopper_problem().empty();
                                 if (t.da) {
                                   if (hopper) launch_wgmma_layout(0, *t.dc, false, *t.b, true, *t.da, x.stream);
                                   else launch_mma_layout(*t.dc, false, *t.b, true, *t.da, x.stream);
                                 }
                                 if (t.db) {
                                   if (hopper) launch_wgmma_layout(0, *t.a, true, *t.dc, false, *t.db, x.stream);
                                   else launch_mma_layout(*t.a, true, *t.dc, false, *t.db, x.stream);
                                 }
                               });
  tuned.unsupported = tensor_core_problem;
  tuned.plan = [](const Case&) {
    return std::string(hopper_problem().empty() ? "{\"path\": \"wgmma\", \"tile\": \"128x256\"}"
                                                : "{\"path\": \"mma\", \"tile\": \"128x256_fast\"}");
  };
  r.add_variant(tuned);
  r.add_variant(cublas_backward("cublas", "cublasLt, the default heuristic's first algorithm, per gradient", CublasPick::first));
  r.add_variant(cublas_backward("cublas_best", "cublasLt, the fastest of its top 16 candidates, per gradient", CublasPick::best));
}

}  // namespace kbench::gemm
