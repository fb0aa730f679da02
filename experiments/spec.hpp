// `kbench spec`: does compile-time specialisation pay? softmax and rmsnorm forward built three
// ways (kernels/rows/spec/spec_builds.hpp: runtime, template_vecs, template_width), the same
// resident plan for all three, each checked against the registered op's FP64 oracle and timed
// on the shared runner (harness/runner.hpp) at the shapes: rows of 4096, 4097, 4104,
// 8192 and 8200 elements (4096 rows) and 512x4104.
//
// What it adds to the runner: per case and build, the kernel's attributes from
// cudaFuncGetAttributes (registers, local memory: spills show there, static shared memory, the
// launch's largest block) and the blocks per SM the CUDA runtime computes for the plan's block
// (extra.spec.kernels, read through Experiment::time_own, on the GPU, after the visits); and
// the analysis of experiments/spec_analysis.hpp (extra.spec.analysis).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "harness/runner.hpp"

namespace kbench {

struct SpecSettings {
  std::vector<std::string> ops{"softmax", "rmsnorm"};
  std::vector<DType> dtypes{DType::f32, DType::f16, DType::bf16};
  std::vector<Shape> shapes{{4096, 4096}, {4096, 4097}, {4096, 4104}, {4096, 8192}, {4096, 8200}, {512, 4104}};
  std::vector<std::string> caches{"cold"};
  std::vector<std::string> timers{"graph"};
  // Visits pair the three builds (they run back to back in each); 9 give a bootstrap interval
  // on the per-visit ratio that a 3% threshold can be read against.
  int visits = 9;
  int samples = 3;
  std::uint64_t seed = 1;
  int device = 0;
  double threshold = 0.03;  // a build pays where it is this much faster (the interval above 1 too)
};

// UsageError (one line) for an op without specialised builds, an op, dtype or shape given
// twice, a shape of another rank, a threshold outside (0, 1), or a set of cases no build can
// run. Touches no GPU.
void validate_spec_settings(const SpecSettings& s);

Experiment spec_experiment(const SpecSettings& s);

}  // namespace kbench
