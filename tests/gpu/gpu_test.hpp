// GPU tests skip with a message when no CUDA device is visible, and fail instead when
// KBENCH_REQUIRE_GPU=1, so that a silent skip cannot pass for a green run on the GPU machine.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace kbench::test {

inline bool gpu_available() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

inline bool gpu_required() {
  const char* v = std::getenv("KBENCH_REQUIRE_GPU");
  return v && std::strcmp(v, "0") != 0 && *v;
}

// Set by scripts/sanitize.sh: instrumentation slows every launch, so a test leaves out a
// comparison of times there (and only that).
inline bool under_sanitizer() {
  const char* v = std::getenv("KBENCH_UNDER_SANITIZER");
  return v && std::strcmp(v, "0") != 0 && *v;
}

}  // namespace kbench::test

#define KB_REQUIRE_GPU()                                                                  \
  do {                                                                                    \
    if (!::kbench::test::gpu_available()) {                                               \
      if (::kbench::test::gpu_required()) FAIL() << "KBENCH_REQUIRE_GPU=1 but no CUDA device"; \
      GTEST_SKIP() << "no CUDA device visible (set KBENCH_REQUIRE_GPU=1 to fail instead)"; \
    }                                                                                     \
  } while (0)
