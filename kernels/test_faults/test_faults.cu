// Variants that fault on purpose, for the tests of fault isolation (issue 19; cli/workers.hpp,
// tests/gpu/test_fault_isolation.cpp). Registered on the add op only when the environment has
// KBENCH_TEST_FAULTS=1, and invisible otherwise (not listed, not in any config's "every
// variant"):
//   fault_address: writes one float through an address no allocation holds (the null page):
//                  cudaErrorIllegalAddress at the check's synchronisation, after which the
//                  process's CUDA context is unusable.
//   fault_spin:    spins until a word of its zeroed workspace turns nonzero, which nothing
//                  writes: a kernel that never ends, which only the worker's step deadline
//                  (--unit-timeout) stops.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/errors.hpp"
#include "registry/registry.hpp"

namespace kbench {

namespace {

__global__ void write_through_kernel(float* where) { *where = 1.0f; }

__global__ void spin_until_set_kernel(const volatile unsigned* flag) {
  while (*flag == 0) __nanosleep(1000);
}

}  // namespace

void register_test_faults(Registry& r) {
  const char* on = std::getenv("KBENCH_TEST_FAULTS");
  if (on == nullptr || std::strcmp(on, "1") != 0) return;
  r.add_variant(make_variant("add", "fault_address", "test hook: writes through an address no allocation holds",
                             [](const LaunchArgs& a) {
                               // An argument, not a constant the compiler could see is null.
                               float* const nowhere = reinterpret_cast<float*>(std::uintptr_t{16});
                               write_through_kernel<<<1, 1, 0, a.stream>>>(nowhere);
                               KB_CUDA_LAUNCH();
                             }));
  Variant spin = make_variant("add", "fault_spin", "test hook: a kernel that never ends", [](const LaunchArgs& a) {
    spin_until_set_kernel<<<1, 1, 0, a.stream>>>(static_cast<const unsigned*>(a.workspace));
    KB_CUDA_LAUNCH();
  });
  spin.workspace_bytes = [](const Case&) { return sizeof(unsigned); };
  r.add_variant(std::move(spin));
}

}  // namespace kbench
