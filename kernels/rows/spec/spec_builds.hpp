// The kernels of `kbench spec`: softmax and rmsnorm forward, each built three ways that run the
// same resident plan (row_plan's, forced resident: a block of `lanes` threads per row, `vecs`
// 16-byte vectors each) and differ only in what the compiler knows:
//   runtime         nothing: width, lanes and vectors per thread are arguments; each thread
//                   loops over its vectors with a runtime count and holds no row in registers
//                   (a register array needs a compile-time size), so it reads x again for each
//                   pass, from L1/L2: what a generic kernel does.
//   template_vecs   the vectors per thread (K) fixed, width and lanes arguments: the production
//                   resident kernels (softmax_device.cuh, rmsnorm_device.cuh), the row in a
//                   K-vector register array.
//   template_width  the same kernel with the width and lanes fixed as well (for kSpecWidths
//                   only): nvec, the tail and each thread's vector count are constants where
//                   the rows are whole vectors.
// Both template builds take rows_aligned as a template flag (checked at launch), as rmsnorm's
// production kernel does; the runtime build computes a row's parts at run time either way.
// The three share a launch bound per plan (the op's, for K vectors; 1024 for the runtime build,
// which must serve every plan), so that the bound is not what differs.
//
// These are not registry variants: the experiment (experiments/spec.cpp) checks each against
// the registered op's oracle and times it, and the production ops stay as they are.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "harness/problem.hpp"

namespace kbench::rows::spec {

enum class Build { runtime, template_vecs, template_width };
inline constexpr Build kBuilds[] = {Build::runtime, Build::template_vecs, Build::template_width};

const char* build_name(Build b);  // "runtime", "template_vecs", "template_width"

// The ops that have these builds: softmax, rmsnorm.
const std::vector<std::string>& spec_ops();
bool has_spec_builds(std::string_view op);

// Why build `b` cannot run the case (empty when it can): no resident plan holds the row, or,
// for the width build, no instantiation for its width.
std::string build_unsupported(const Case& c, Build b);

// Build `b` of the case's op, as a Launchable named build_name(b) (static storage).
// std::invalid_argument for an op without spec builds.
const Launchable& build_launchable(std::string_view op, Build b);

// What cudaFuncGetAttributes says of the kernel build `b` launches for the case (its rows
// taken as allocated: contiguous from a 256-byte-aligned base unless the case has a row
// stride), and the occupancy the CUDA runtime computes for the plan's block size.
struct KernelAttributes {
  std::string kernel;       // which instantiation: "template_width<4097> vecs=8 lanes=256 unaligned"
  std::string plan;         // describe(plan)
  int threads = 0;          // per block
  int registers = 0;        // numRegs, per thread
  std::size_t local_bytes = 0;   // localSizeBytes per thread: spills and stack arrays
  std::size_t shared_bytes = 0;  // sharedSizeBytes, static
  std::size_t const_bytes = 0;
  int max_threads_per_block = 0;  // what the launch bound and registers allow
  int blocks_per_sm = 0;          // cudaOccupancyMaxActiveBlocksPerMultiprocessor at `threads`
  int binary_version = 0;         // SASS target, e.g. 90
};

// Touches the GPU (the current device). std::invalid_argument when the build cannot run the case.
KernelAttributes build_attributes(const Case& c, Build b);

}  // namespace kbench::rows::spec
