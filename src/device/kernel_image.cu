#include "device/kernel_image.hpp"

#include <cuda_runtime_api.h>

#include "core/errors.hpp"
#include "core/build_info.hpp"

namespace kbench {
namespace {

// Does nothing: only its presence in the fatbin for a given architecture matters.
__global__ void build_image_probe_kernel() {}

}  // namespace

std::string kernel_image_problem(const void* kernel, int device) {
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, kernel);
  if (status == cudaSuccess) return {};
  (void)cudaGetLastError();  // not sticky; leave the runtime clean for the caller
  cudaDeviceProp prop{};
  KB_CUDA(cudaGetDeviceProperties(&prop, device));
  const std::string cc = std::to_string(prop.major) + std::to_string(prop.minor);
  const std::string gpu = "GPU " + std::to_string(device) + " (" + prop.name + ", sm_" + cc + ")";
  if (status != cudaErrorNoKernelImageForDevice && status != cudaErrorInvalidDeviceFunction &&
      status != cudaErrorInvalidPtx && status != cudaErrorUnsupportedPtxVersion)
    return gpu + " cannot load this kbench's kernels: " + cudaGetErrorString(status);
  const BuildInfo& b = build_info();
  return gpu + " cannot run this kbench: it holds code for " + architectures_text(b.architectures) +
         " only; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + (cc == "90" ? "90a" : cc) +
         " (or native on this machine; README, 'Builds for other GPUs')";
}

std::string build_image_problem(int device) {
  return kernel_image_problem(reinterpret_cast<const void*>(&build_image_probe_kernel), device);
}

}  // namespace kbench
