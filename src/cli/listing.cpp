#include "cli/listing.hpp"

#include <cstdio>
#include <vector>

#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "core/dtype.hpp"
#include "device/gpu_load.hpp"
#include "device/warmup.hpp"
#include "experiments/sweep_config.hpp"
#include "harness/l2_flush.hpp"
#include "harness/runner.hpp"
#include "kernels/all_ops.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"

namespace kbench {
namespace {

using nlohmann::json;

// The shapes a variant is asked about, per rank: a small one and the awkward ones a variant
// may be limited to (wide rows, few rows, a deep K). A dtype counts when any of them is accepted,
// so a variant made for wide rows is not listed as taking nothing.
const std::vector<Shape>& probe_shapes(std::size_t rank) {
  static const std::vector<Shape> one = {{256}, {1 << 20}};
  static const std::vector<Shape> two = {{256, 256}, {4096, 1024}, {8, 65536}, {4, 1 << 20}};
  static const std::vector<Shape> three = {{256, 256, 256}, {4096, 4096, 4096}};
  return rank == 1 ? one : rank == 2 ? two : three;
}

json variant_json(const Op& op, const Variant& v) {
  json dtypes = json::array();
  std::string refusal;  // why the variant took no dtype: each dtype's first reason, once
  for (DType t : kAllDTypes) {
    bool accepted = false;
    std::string first_why;
    for (const Shape& shape : probe_shapes(op.shape_rank)) {
      std::string why;
      try {
        why = v.unsupported(make_case(op, t, shape));
      } catch (const UsageError& e) {  // a shape the op itself refuses
        why = e.what();
      }
      if (why.empty()) {
        accepted = true;
        break;
      }
      if (first_why.empty()) first_why = why;
    }
    if (accepted)
      dtypes.push_back(std::string(dtype_name(t)));
    else if (refusal.find(first_why) == std::string::npos)
      refusal += (refusal.empty() ? "" : "; ") + first_why;
  }
  json j = {{"name", v.name}, {"baseline", v.baseline}, {"summary", v.summary}, {"dtypes", dtypes}};
  // A variant this machine cannot run at all (the Hopper kernels off sm_90) says why.
  if (dtypes.empty()) j["unavailable"] = refusal;
  return j;
}

json method_json() {
  const SweepSettings defaults;
  return {
      {"visits", defaults.visits},
      {"samples", defaults.samples},
      {"seed", defaults.seed},
      {"caches", defaults.caches},
      {"timers", defaults.timers},
      {"max_visits_or_samples", kMaxVisitsOrSamples},
      {"max_seed", kMaxSeed},
      {"clock_floor", kDefaultClockFloor},
      {"warmup_min_ms", kWarmupMinMs},
      {"l2_flush_l2_multiple", kFlushL2Multiple},
      {"l2_flush_min_bytes", kFlushMinBytes},
      {"rotation_l2_multiple", kRotationL2Multiple},
      {"graph_target_us", kGraphTargetUs},
      {"graph_min_launches", kMinGraphLaunches},
      {"graph_max_launches", kMaxGraphLaunches},
      {"busy_utilization_pct", kBusyUtilizationPct},
      {"tolerance_rule", "|out - ref| <= atol + rtol * |ref| per element, ref from an FP64 oracle (Eigen), "
                         "outputs poisoned with NaN before each check"},
  };
}

std::string cell_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string s;
    for (const json& item : v) s += (s.empty() ? "" : ";") + cell_text(item);
    return s;
  }
  return v.dump();
}

}  // namespace

json listing_json() {
  json ops = json::array();
  for (const Op& op : registry().ops()) {
    json params = json::array();
    for (const OpParam& p : op.params)
      params.push_back({{"name", p.name}, {"default", p.fallback}, {"min", p.lo}, {"max", p.hi}, {"what", p.what}});
    json variants = json::array();
    for (const Variant* v : registry().variants(op.name)) variants.push_back(variant_json(op, *v));
    ops.push_back({{"name", op.name},
                   {"summary", op.summary},
                   {"shape_rank", op.shape_rank},
                   {"params", params},
                   {"variants", variants}});
  }
  return {{"schema", "kbench/list/v1"},
          {"version", build_info().version},
          {"ops", ops},
          {"experiments", {"run", "grid", "fit", "probe", "spec"}},
          {"method", method_json()}};
}

std::string listing_markdown(const json& listing) {
  std::string out;
  for (const json& op : listing.at("ops")) {
    out += "## " + markdown_text(op.at("name").get<std::string>()) + "\n\n" +
           markdown_text(op.at("summary").get<std::string>()) + "\n\nshape rank " +
           std::to_string(op.at("shape_rank").get<int>()) + "\n";
    for (const json& p : op.at("params"))
      out += "`--param " + markdown_text(p.at("name").get<std::string>()) + "=" + cell_text(p.at("default")) +
             "` (default; " + cell_text(p.at("min")) + " to " + cell_text(p.at("max")) +
             "): " + markdown_text(p.at("what").get<std::string>()) + "\n";
    out += "\n| variant | baseline | dtypes | what |\n|---|---|---|---|\n";
    for (const json& v : op.at("variants")) {
      std::string dtypes = cell_text(v.at("dtypes"));
      if (v.contains("unavailable")) dtypes = "none here: " + v.at("unavailable").get<std::string>();
      out += markdown_row({v.at("name").get<std::string>(), v.at("baseline").get<bool>() ? "yes" : "",
                           dtypes, v.at("summary").get<std::string>()});
    }
    out += "\n";
  }
  out += "experiments: " + cell_text(listing.at("experiments")) + "\n\n## method constants\n\n"
         "| name | value |\n|---|---|\n";
  for (const auto& [name, value] : listing.at("method").items()) out += markdown_row({name, cell_text(value)});
  return out;
}

std::string listing_csv(const json& listing) {
  std::string out = "op,shape_rank,variant,baseline,dtypes,unavailable,summary\n";
  for (const json& op : listing.at("ops"))
    for (const json& v : op.at("variants")) {
      const std::vector<std::string> fields{op.at("name").get<std::string>(),
                                            std::to_string(op.at("shape_rank").get<int>()),
                                            v.at("name").get<std::string>(),
                                            v.at("baseline").get<bool>() ? "1" : "0",
                                            cell_text(v.at("dtypes")),
                                            v.value("unavailable", ""),
                                            v.at("summary").get<std::string>()};
      for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
      out += "\n";
    }
  return out;
}

}  // namespace kbench
