// A kernel built for sm_75 alone (SASS, no PTX: tests/CMakeLists.txt), so that no device of
// another major version can load it: the negative control of kernel_image_problem
// (tests/gpu/test_device.cpp), which must name such a GPU instead of passing it.
#include "foreign_arch_kernel.hpp"

namespace kbench::test {
namespace {
__global__ void foreign_arch_kernel_body() {}
}  // namespace

const void* foreign_arch_kernel() { return reinterpret_cast<const void*>(&foreign_arch_kernel_body); }

}  // namespace kbench::test
