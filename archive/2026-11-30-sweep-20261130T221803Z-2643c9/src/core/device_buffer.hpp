// RAII owner of device memory. Move-only; frees on destruction without throwing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "core/errors.hpp"

namespace kbench {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) KB_CUDA(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // A buffer whose bytes are all zero (workspaces: see Variant::workspace_bytes).
  static DeviceBuffer zeroed(std::size_t bytes) {
    DeviceBuffer b(bytes);
    if (bytes) KB_CUDA(cudaMemset(b.ptr_, 0, bytes));
    return b;
  }

  void* get() const { return ptr_; }
  std::byte* bytes_ptr() const { return static_cast<std::byte*>(ptr_); }
  std::size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace kbench
