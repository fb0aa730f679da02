// What this binary was built as: its version, the CUDA Toolkit it was compiled with and the
// CUDA architectures it holds code for, fixed at configure time (CMakeLists.txt gives them to
// build_info.cpp alone). `kbench --version` prints them beside the commit, and the start of a
// run refuses a GPU the list cannot serve (device/kernel_image.hpp).
#pragma once

#include <string>
#include <vector>

namespace kbench {

struct BuildInfo {
  std::string version;                     // the project's VERSION: "0.1.0"
  std::string cuda_toolkit;                // nvcc's toolkit version: "13.0.48"
  std::string cuda_runtime;                // the runtime linked in (statically): "13.0"
  std::vector<std::string> architectures;  // CMAKE_CUDA_ARCHITECTURES as built: {"90a"}
  std::string architectures_from;          // where that list came from (cmake/CudaArchitectures.cmake)
};

const BuildInfo& build_info();

// The architectures as nvcc targets read them: {"90a", "89-real"} -> "sm_90a, sm_89".
std::string architectures_text(const std::vector<std::string>& architectures);

}  // namespace kbench
