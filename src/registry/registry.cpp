#include "registry/registry.hpp"

#include <algorithm>
#include <cstdio>

#include "core/errors.hpp"

namespace kbench {

Variant make_variant(std::string op, std::string name, std::string summary,
                     std::function<void(const LaunchArgs&)> launch) {
  Variant v;
  v.op = std::move(op);
  v.name = std::move(name);
  v.summary = std::move(summary);
  v.launch = std::move(launch);
  return v;
}

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

Case make_case(const Op& op, DType dtype, const Shape& shape, const std::map<std::string, double>& given) {
  if (shape.size() != op.shape_rank)
    throw UsageError("op '" + op.name + "' takes " + std::to_string(op.shape_rank) + "-dimensional shapes, got '" +
                     shape_string(shape) + "'");
  Case c{op.name, dtype, shape, 0, {}};
  for (const OpParam& p : op.params) c.params[p.name] = p.fallback;
  for (const auto& [name, value] : given) {
    const auto p = std::find_if(op.params.begin(), op.params.end(), [&](const OpParam& q) { return q.name == name; });
    if (p == op.params.end()) {
      std::string known;
      for (const OpParam& q : op.params) known += (known.empty() ? "" : ", ") + q.name;
      throw UsageError("op '" + op.name + "' takes no parameter '" + name + "'" +
                       (known.empty() ? std::string(" (it takes none)") : " (it takes " + known + ")"));
    }
    if (!(value >= p->lo && value <= p->hi))  // also refuses NaN
      throw UsageError("parameter '" + name + "' of op '" + op.name + "' must lie in [" + number(p->lo) + ", " +
                       number(p->hi) + "] (" + p->what + "), got " + number(value));
    c.params[name] = value;
  }
  return c;
}

void Registry::add_op(Op op) {
  if (std::any_of(ops_.begin(), ops_.end(), [&](const Op& o) { return o.name == op.name; }))
    throw std::logic_error("op registered twice: " + op.name);
  ops_.push_back(std::move(op));
}

void Registry::add_variant(Variant v) {
  op(v.op);  // the op must exist first
  for (const auto& w : variants_)
    if (w.op == v.op && w.name == v.name)
      throw std::logic_error("variant registered twice: " + v.op + "/" + v.name);
  variants_.push_back(std::move(v));
}

const Op& Registry::op(std::string_view name) const {
  for (const auto& o : ops_)
    if (o.name == name) return o;
  std::string known;
  for (const auto& o : ops_) known += (known.empty() ? "" : ", ") + o.name;
  throw UsageError("unknown op '" + std::string(name) + "' (known: " + known + ")");
}

const Variant& Registry::variant(std::string_view op_name, std::string_view name) const {
  for (const auto* v : variants(op_name))
    if (v->name == name) return *v;
  std::string known;
  for (const auto* v : variants(op_name)) known += (known.empty() ? "" : ", ") + v->name;
  throw UsageError("unknown variant '" + std::string(name) + "' of op '" + std::string(op_name) +
                   "' (known: " + known + ")");
}

std::vector<const Variant*> Registry::variants(std::string_view op_name) const {
  op(op_name);
  std::vector<const Variant*> out;
  for (const auto& v : variants_)
    if (v.op == op_name) out.push_back(&v);
  return out;
}

}  // namespace kbench
