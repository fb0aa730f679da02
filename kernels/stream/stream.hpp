// The stream op family: the same-traffic rooflines. A sweep times a stream of each memory-bound
// case's read:write mix at that case's bytes (experiments/sweep.cpp), so that a kernel's share
// of bandwidth is read against the best kernel that moves the same bytes in the same pattern,
// not only against a copy (a 2-read, 1-write stream is served faster than a copy on an H200).
// The op (stream_op.cpp, host) and its variants with their registration (stream.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "registry/registry.hpp"

namespace kbench {

inline constexpr int kStreamMaxReads = 3, kStreamMaxWrites = 2;

Op make_stream_op();

// The mix of a stream case (its reads and writes parameters).
TrafficMix stream_mix(const Case& c);

// The read-only streams (W = 0) write, for each chunk of 16 KiB of every input (4096 float32
// elements, 8192 16-bit ones; the last chunk may be shorter), its largest element: a result that
// needs no grid-wide step and costs 1/4096 of the bytes read.
inline constexpr int kStreamChunkBytes = 16384;
inline std::int64_t stream_chunks(std::int64_t n, std::size_t element_bytes) {
  const auto per_chunk = static_cast<std::int64_t>(kStreamChunkBytes / element_bytes);
  return (n + per_chunk - 1) / per_chunk;
}

// Reads `reads` streams x[0, n) of dtype (16-byte aligned) and writes each of `writes` streams y
// with x0 + ... + x(reads-1) (summed in float32, rounded once) or, with nothing to write, each
// chunk's largest input element to chunk_max[0, stream_chunks); `streaming` marks every load and
// store evict-first (ld.global.cs, st.global.cs).
void launch_stream(DType dtype, const void* const* x, int reads, void* const* y, int writes, void* chunk_max,
                   std::int64_t n, bool streaming, cudaStream_t stream);

}  // namespace kbench
