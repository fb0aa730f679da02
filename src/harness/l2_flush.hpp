// Cold-cache flushing, and a delay that keeps the stream busy without touching the cache.
// flush() evicts the L2 by streaming a buffer twice the L2's size through
// it, outside any timed region. It reads rather than writes (as a memset would): a write leaves
// the L2 full of dirty lines whose write-back would then land inside the next timed kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "core/device_buffer.hpp"

namespace kbench {

// The flush buffer: this many times the L2's size, and never less than kFlushMinBytes.
inline constexpr std::size_t kFlushL2Multiple = 2;
inline constexpr std::size_t kFlushMinBytes = std::size_t{8} << 20;

class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes);
  void flush(cudaStream_t stream) const;
  std::size_t bytes() const { return buffer_.size(); }

 private:
  DeviceBuffer buffer_;
  DeviceBuffer sink_;
};

// Queues a one-warp kernel that spins for `microseconds` on %globaltimer, touching no memory.
// Timers queue it ahead of a warm sample so that the host's launch work overlaps it.
void launch_queue_delay(cudaStream_t stream, double microseconds);

// Queues a kernel that does nothing: timed like any variant, it gives a timer's floor, the
// least that timer can report for one launch (see the sweep's extra.timer_floor).
void launch_empty_kernel(cudaStream_t stream);

}  // namespace kbench
