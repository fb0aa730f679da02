#include "core/errors.hpp"

#include <string>

namespace kbench {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                  cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

}  // namespace kbench
