#include "plugin/plugin_variant.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "harness/prepare.hpp"

namespace kbench {

namespace {

std::optional<DType> dtype_of_code(std::int32_t code) {
  switch (code) {
    case KBENCH_PLUGIN_FLOAT32: return DType::f32;
    case KBENCH_PLUGIN_FLOAT16: return DType::f16;
    case KBENCH_PLUGIN_BFLOAT16: return DType::bf16;
    default: return std::nullopt;
  }
}

std::int32_t code_of(DType t) {
  switch (t) {
    case DType::f32: return KBENCH_PLUGIN_FLOAT32;
    case DType::f16: return KBENCH_PLUGIN_FLOAT16;
    case DType::bf16: return KBENCH_PLUGIN_BFLOAT16;
  }
  return 0;
}

// A Case as the ABI's kbench_plugin_case, valid while this object lives (it points into it).
class PluginCase {
 public:
  explicit PluginCase(const Case& c) {
    for (const auto& [name, value] : c.params) params_.push_back(kbench_plugin_param{name.c_str(), value});
    view_.op = c.op.c_str();
    view_.dtype = code_of(c.dtype);
    view_.rank = static_cast<std::int32_t>(std::min<std::size_t>(c.shape.size(), KBENCH_PLUGIN_MAX_RANK));
    for (std::int32_t i = 0; i < view_.rank; ++i) view_.shape[i] = c.shape[static_cast<std::size_t>(i)];
    view_.params = params_.empty() ? nullptr : params_.data();
    view_.param_count = static_cast<std::int32_t>(params_.size());
  }
  PluginCase(const PluginCase&) = delete;
  PluginCase& operator=(const PluginCase&) = delete;
  const kbench_plugin_case* get() const { return &view_; }

 private:
  std::vector<kbench_plugin_param> params_;
  kbench_plugin_case view_{};
};

// The tensors as the ABI passes them, named as the op names them (`descs`, in the same order).
std::vector<kbench_plugin_tensor> plugin_tensors(std::span<const DeviceTensor> tensors,
                                                 const std::vector<TensorDesc>& descs) {
  std::vector<kbench_plugin_tensor> out;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const DeviceTensor& t = tensors[i];
    out.push_back(kbench_plugin_tensor{i < descs.size() ? descs[i].name.c_str() : nullptr, t.data, code_of(t.dtype),
                                       t.rows, t.cols, t.row_stride});
  }
  return out;
}

// What a plugin wrote into a message buffer, shown safely: it may not have ended it with a NUL.
std::string plugin_text(char* buffer, std::size_t size) {
  buffer[size - 1] = '\0';
  return printable(buffer, 300);
}

}  // namespace

std::string plugin_name_problem(const char* name) {
  if (name == nullptr || *name == '\0') return "has no name";
  const std::string_view n(name, strnlen(name, kMaxPluginNameBytes + 1));
  if (n.size() > kMaxPluginNameBytes)
    return "'" + printable(n, 60) + "...' is longer than " + std::to_string(kMaxPluginNameBytes) + " bytes";
  const auto ok = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
  };
  if (!std::all_of(n.begin(), n.end(), ok))
    return "'" + printable(n, 60) + "' is not a name (letters, digits, '_' and '-' only)";
  return "";
}

std::string plugin_variant_name(const char* name) { return std::string("plugin.") + name; }

std::string plugin_variant_problem(const kbench_plugin_variant& v, const Registry& r) {
  if (const std::string why = plugin_name_problem(v.name); !why.empty()) return "its name " + why;
  if (v.op == nullptr) return "it names no op";
  try {
    r.op(v.op);
  } catch (const UsageError& e) {
    return e.what();  // "unknown op 'x' (known: ...)"
  }
  if (v.launch == nullptr) return "it has no launcher";
  if (v.dtypes == nullptr || v.dtype_count <= 0) return "it lists no dtypes";
  for (std::int32_t i = 0; i < v.dtype_count; ++i)
    if (!dtype_of_code(v.dtypes[i]))
      return "unknown dtype code " + std::to_string(v.dtypes[i]) + " (known: " + std::to_string(KBENCH_PLUGIN_FLOAT32) +
             " float32, " + std::to_string(KBENCH_PLUGIN_FLOAT16) + " float16, " +
             std::to_string(KBENCH_PLUGIN_BFLOAT16) + " bfloat16)";
  const std::string name = plugin_variant_name(v.name);
  for (const Variant* w : r.variants(v.op))
    if (w->name == name) return "op '" + std::string(v.op) + "' already has a variant '" + name + "' (from an earlier plugin)";
  return "";
}

Variant make_plugin_variant(const kbench_plugin_variant& pv, const Op& op, const std::string& library) {
  const std::string name = plugin_variant_name(pv.name);
  const std::string who = name + " (" + library + ")";
  Variant v;
  v.op = op.name;
  v.name = name;
  v.summary = (pv.summary ? printable(pv.summary, 200) : std::string("no summary")) + "; from plugin " + library;
  std::vector<DType> dtypes;
  for (std::int32_t i = 0; i < pv.dtype_count; ++i) dtypes.push_back(*dtype_of_code(pv.dtypes[i]));
  const auto supports = pv.supports;
  v.unsupported = [dtypes, supports](const Case& c) -> std::string {
    if (std::find(dtypes.begin(), dtypes.end(), c.dtype) == dtypes.end())
      return "the plugin does not list " + std::string(dtype_name(c.dtype));
    if (c.shape.size() > KBENCH_PLUGIN_MAX_RANK) return "the plugin ABI passes at most 4 dimensions";
    if (supports == nullptr) return "";
    const PluginCase pc(c);
    char why[256] = {};
    if (supports(pc.get(), why, sizeof why) != 0) return "";
    const std::string said = plugin_text(why, sizeof why);
    return said.empty() ? "the plugin does not support this case" : "the plugin says: " + said;
  };
  const auto workspace = pv.workspace_bytes;
  if (workspace != nullptr)
    v.workspace_bytes = [workspace](const Case& c) {
      const PluginCase pc(c);
      return workspace(pc.get());
    };
  // Per launch: the case and the tensors in the ABI's terms, and the tensors' names from the op.
  // Host work of a few allocations, which the timers keep out of what they measure (events wait
  // behind a host-released gate; graphs replay what was captured; CUPTI times kernels alone).
  v.launch = [launch = pv.launch, workspace, inputs = op.inputs, outputs = op.outputs, who](const LaunchArgs& a) {
    const PluginCase pc(a.c);
    const std::vector<kbench_plugin_tensor> in = plugin_tensors(a.inputs, inputs(a.c));
    const std::vector<kbench_plugin_tensor> out = plugin_tensors(a.outputs, outputs(a.c));
    char error[512] = {};
    const kbench_plugin_args args{pc.get(),
                                  in.data(),
                                  static_cast<std::int32_t>(in.size()),
                                  out.data(),
                                  static_cast<std::int32_t>(out.size()),
                                  a.workspace,
                                  a.workspace != nullptr && workspace != nullptr ? workspace(pc.get()) : 0,
                                  error,
                                  sizeof error};
    const int code = launch(&args, a.stream);
    if (code != 0) {
      const std::string said = plugin_text(error, sizeof error);
      throw VariantLaunchError(who + " returned error " + std::to_string(code) + " on " + case_label(a.c) + ": " +
                               (said.empty() ? "(no message)" : said));
    }
  };
  return v;
}

}  // namespace kbench
