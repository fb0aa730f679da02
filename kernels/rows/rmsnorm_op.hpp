// What the two RMSNorm ops' definitions share (rmsnorm_op.cpp, rmsnorm_backward_op.cpp).
#pragma once

#include <vector>

#include "registry/registry.hpp"

namespace kbench::rows {

// eps, a runtime argument of both ops.
OpParam rmsnorm_eps_param();

// The weight: one contiguous row of the case's width.
TensorDesc weight_desc(const Case& c, const char* name);

// The bound on |h| of the probe's large rows: half the dtype's largest (h is stored in the
// dtype), and small enough that a row's sum of squares, taken in float32, stays below a
// quarter of float32's largest.
double large_h_bound(const Case& c);

// 1 / sqrt(mean(h^2) + eps) of every row of h, in double.
std::vector<double> inverse_rms(const HostTensor& h, double eps);

}  // namespace kbench::rows
