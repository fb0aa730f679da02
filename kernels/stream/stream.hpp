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

// The read-only stream's scratch: the largest value so far as an order-preserving key, and the
// blocks that have added theirs. Zero between launches (the last block resets it).
struct StreamMaxScratch {
  unsigned int key;
  unsigned int arrived;
};

// Reads `reads` streams x[0, n) of dtype (16-byte aligned) and writes each of `writes` streams y
// with x0 + ... + x(reads-1) (summed in float32, rounded once) or, with nothing to write, the
// largest input element to max[0]; `streaming` marks every load and store evict-first
// (ld.global.cs, st.global.cs).
void launch_stream(DType dtype, const void* const* x, int reads, void* const* y, int writes, void* max,
                   StreamMaxScratch* scratch, std::int64_t n, bool streaming, cudaStream_t stream);

}  // namespace kbench
