// A __global__ function with code for sm_75 only (foreign_arch_kernel.cu).
#pragma once

namespace kbench::test {

const void* foreign_arch_kernel();
inline constexpr int kForeignArchMajor = 7;

}  // namespace kbench::test
