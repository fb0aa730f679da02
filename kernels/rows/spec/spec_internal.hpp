// What the two ops' spec files (softmax_spec.cu, rmsnorm_spec.cu) share with spec_builds.cpp:
// host code only. The templates that choose an instantiation are in spec_select.cuh.
#pragma once

#include <string>

#include "kernels/rows/row_plan.hpp"
#include "kernels/rows/spec/spec_builds.hpp"

namespace kbench::rows::spec {

// One op's three builds, as its .cu file provides them.
struct SpecOp {
  void (*launch)(Build, const LaunchArgs&);
  KernelAttributes (*attributes)(Build, const Case&);
};
SpecOp softmax_spec();  // softmax_spec.cu
SpecOp rmsnorm_spec();  // rmsnorm_spec.cu

// The plan every build of the case runs: row_plan's resident plan (forced: the builds exist to
// compare ways of holding a row, so they never loop or split). Reads the current device.
RowPlan spec_plan(const Case& c);

// Whether the case's rows are whole 16-byte vectors from a 16-byte boundary when its tensors
// are allocated as the harness allocates them (cudaMalloc: 256-byte aligned bases).
bool case_rows_aligned(const Case& c);

// cudaFuncGetAttributes of `kernel` and its occupancy at the plan's block size.
KernelAttributes read_attributes(const void* kernel, std::string name, const RowPlan& plan);

}  // namespace kbench::rows::spec
