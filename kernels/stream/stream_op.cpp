// stream: reads R streams of n elements and writes W (R = 1..3, W = 0..2): every y_j is
// x_0 + ... + x_(R-1); with nothing to write, the output is each 16 KiB chunk's largest input
// element (exact, whatever the order). Bytes: (R + W) n elements (+ the chunks' maxima); no
// flops counted. The sweep's rooflines run it in float32.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/parallel.hpp"
#include "kernels/common/input_kinds.hpp"
#include "kernels/common/vector_op.hpp"
#include "kernels/stream/stream.hpp"

namespace kbench {

TrafficMix stream_mix(const Case& c) {
  return TrafficMix{static_cast<int>(c.param("reads")), static_cast<int>(c.param("writes"))};
}

Op make_stream_op() {
  Op op = make_vector_op("stream", "reads R streams, writes W (their sum; with W = 0 each 16 KiB chunk's largest element): the same-traffic rooflines",
                         "kernels/stream/", {}, "y");
  op.params = {OpParam{"reads", 1, 1, kStreamMaxReads, "streams read (1 to 3)"},
               OpParam{"writes", 1, 0, kStreamMaxWrites, "streams written (0 to 2; 0: only each 16 KiB chunk's largest element)"}};
  op.inputs = [](const Case& c) {
    std::vector<TensorDesc> in;
    for (int r = 0; r < stream_mix(c).reads; ++r) in.push_back(TensorDesc{"x" + std::to_string(r), c.dtype, 1, c.shape.at(0), c.shape.at(0)});
    return in;
  };
  op.outputs = [](const Case& c) {
    const TrafficMix mix = stream_mix(c);
    if (mix.writes == 0) {
      const std::int64_t chunks = stream_chunks(c.shape.at(0), dtype_size(c.dtype));
      return std::vector<TensorDesc>{TensorDesc{"chunk_max", c.dtype, 1, chunks, chunks}};
    }
    std::vector<TensorDesc> out;
    for (int w = 0; w < mix.writes; ++w) out.push_back(TensorDesc{"y" + std::to_string(w), c.dtype, 1, c.shape.at(0), c.shape.at(0)});
    return out;
  };
  op.oracle = [](const Case& c, const std::vector<HostTensor>& in) {
    const TrafficMix mix = stream_mix(c);
    const std::int64_t n = c.shape.at(0);
    if (mix.writes == 0) {
      const std::int64_t per_chunk = kStreamChunkBytes / static_cast<std::int64_t>(dtype_size(c.dtype));
      const std::int64_t chunks = stream_chunks(n, dtype_size(c.dtype));
      std::vector<double> top(static_cast<std::size_t>(chunks), -INFINITY);
      for (const HostTensor& t : in)
        for (std::int64_t i = 0; i < n; ++i) {
          double& m = top[static_cast<std::size_t>(i / per_chunk)];
          m = std::max(m, t.values[static_cast<std::size_t>(i)]);
        }
      return std::vector<HostTensor>{HostTensor{TensorDesc{"chunk_max", c.dtype, 1, chunks, chunks}, std::move(top)}};
    }
    std::vector<double> sum(static_cast<std::size_t>(n), 0.0);
    parallel_pieces(n, kParallelGrain, [&](std::int64_t begin, std::int64_t end) {
      for (const HostTensor& t : in)
        for (std::int64_t i = begin; i < end; ++i) sum[static_cast<std::size_t>(i)] += t.values[static_cast<std::size_t>(i)];
    });
    std::vector<HostTensor> out;
    for (int w = 0; w < mix.writes; ++w) out.push_back(HostTensor{TensorDesc{"y" + std::to_string(w), c.dtype, 1, n, n}, sum});
    return out;
  };
  // The kernel adds left to right in float32: R - 1 roundings, the k-th of a partial sum of k + 1
  // inputs in [-1, 1], each at most u (k + 1) (u = 2^-24); their sum, u (R - 1)(R + 2) / 2, is
  // below u R^2; then one rounding to the dtype (half an ulp: its epsilon, relative), which 2 u R^2
  // leaves room for on the float32 error it rounds. Copying (R = 1) and the largest element are
  // exact.
  op.tolerance = [](const Case& c, std::size_t) {
    const TrafficMix mix = stream_mix(c);
    if (mix.writes == 0 || mix.reads == 1) return Tolerance{0, 0, "a copy and a maximum are exact"};
    const double rtol = c.dtype == DType::f32 ? 0.0 : dtype_epsilon(c.dtype);
    return Tolerance{2 * std::ldexp(1.0, -24) * mix.reads * mix.reads, rtol,
                     "R - 1 float32 roundings of sums below R (2 u R^2), one rounding to the dtype"};
  };
  op.bytes = [](const Case& c) {
    const TrafficMix mix = stream_mix(c);
    const double n = static_cast<double>(c.shape.at(0)), size = static_cast<double>(dtype_size(c.dtype));
    const double maxima = mix.writes == 0 ? static_cast<double>(stream_chunks(c.shape.at(0), dtype_size(c.dtype))) : 0.0;
    return ((mix.reads + mix.writes) * n + maxima) * size;
  };
  return op;
}

}  // namespace kbench
