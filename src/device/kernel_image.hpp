// Whether this binary holds code the selected GPU can run. A build for sm_90a alone has no
// kernel an sm_89 or sm_100 device can load (SASS runs only within its major version, and
// compute_90a's PTX cannot be compiled for another target), and without this check the first
// launch would fail deep inside a case with "no kernel image is available".
#pragma once

#include <string>

namespace kbench {

// Empty when `kernel` (a __global__ function of this binary) can run on `device`; otherwise one
// line saying why and how to rebuild. Asks the runtime itself (cudaFuncGetAttributes), which
// picks the image as a launch would, JIT from PTX included, and loads only that one module.
std::string kernel_image_problem(const void* kernel, int device);

// kernel_image_problem for a probe kernel compiled like every other CUDA file of kbench (one
// target, one CUDA_ARCHITECTURES list), so it stands for all of them.
std::string build_image_problem(int device);

}  // namespace kbench
