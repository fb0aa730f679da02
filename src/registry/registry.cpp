#include "registry/registry.hpp"

#include <algorithm>

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
