#include "python/output_check.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/errors.hpp"
#include "harness/compare.hpp"

namespace kbench::python {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

CheckInfo compare_arrays(const std::vector<ArrayView>& outputs, const std::vector<ArrayView>& reference,
                         const std::vector<Tolerance>& tols, cudaStream_t stream, const std::string& label) {
  if (outputs.size() != reference.size())
    throw UsageError(label + ": " + std::to_string(outputs.size()) + " output(s), the reference has " +
                     std::to_string(reference.size()));
  if (tols.size() != 1 && tols.size() != outputs.size())
    throw UsageError(label + ": " + std::to_string(tols.size()) + " tolerances (atol, rtol) for " +
                     std::to_string(outputs.size()) + " output(s): give one for all or one per output");
  for (std::size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].elements() != reference[i].elements())
      throw UsageError(label + ": output " + std::to_string(i) + " has shape " + shape_text(outputs[i].shape) +
                       ", the reference " + shape_text(reference[i].shape));
  CheckInfo info;
  info.passed = true;
  double worst_ratio = -1;
  for (std::size_t i = 0; i < outputs.size() && info.passed; ++i) {
    const Tolerance& tol = tols[tols.size() == 1 ? 0 : i];
    const std::vector<double> got = read_values(outputs[i], stream);
    const std::vector<double> ref = read_values(reference[i], stream);
    const Scan scan = compare_output(got, ref, tol);
    info.share = std::max(info.share, scan.share);
    if (scan.worst_at >= 0 && scan.worst_ratio > worst_ratio) {
      worst_ratio = scan.worst_ratio;
      const auto w = static_cast<std::size_t>(scan.worst_at);
      const Element e = compare_element(got[w], ref[w], tol);
      info.max_err = e.err;
      info.tolerance = e.allowed;
    }
    if (scan.bad >= 0) {
      const auto b = static_cast<std::size_t>(scan.bad);
      const Element e = compare_element(got[b], ref[b], tol);
      std::ostringstream msg;
      msg.precision(9);
      msg << "output " << i << " element " << b << ": got " << got[b] << ", expected " << ref[b] << " (allowed error "
          << e.allowed << ")";
      info.passed = false;
      info.max_err = std::isnan(e.err) || std::isnan(got[b]) ? INFINITY : e.err;
      info.tolerance = e.allowed;
      info.detail = msg.str();
    }
  }
  return info;
}

}  // namespace kbench::python
