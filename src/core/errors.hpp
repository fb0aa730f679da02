// Error types and the CUDA call check. Every failing CUDA call names its file, line and the
// call itself; bad user input is a UsageError, which main turns into one line and exit 2.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace kbench {

// Bad input from the user (unknown op, malformed shape, unreadable file, no device):
// reported as one line, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SIGINT or SIGTERM stopped the command (core/interrupt.hpp): one line, exit status 128 + the
// signal, as a shell reports a process the signal ended. What was measured is written first.
class Interrupted : public std::runtime_error {
 public:
  Interrupted(const std::string& what, int signal) : std::runtime_error(what), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// The command ran but its outcome is a failure (a check that did not pass, verify problems):
// reported as one line, exit status 1.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A CUDA runtime call failed: a bug or a broken device, not bad input.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

}  // namespace kbench

#define KB_CUDA(call)                                                      \
  do {                                                                     \
    cudaError_t kb_err_ = (call);                                          \
    if (kb_err_ != cudaSuccess)                                            \
      ::kbench::throw_cuda_error(kb_err_, #call, __FILE__, __LINE__);      \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define KB_CUDA_LAUNCH() KB_CUDA(cudaGetLastError())
