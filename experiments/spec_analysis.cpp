#include "experiments/spec_analysis.hpp"

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "core/shape.hpp"
#include "core/stats.hpp"
#include "core/text.hpp"
#include "kernels/rows/spec/spec_builds.hpp"

namespace kbench {
namespace {

using nlohmann::json;
namespace spec = rows::spec;

struct Comparison {
  spec::Build build, against;
};
constexpr Comparison kComparisons[] = {{spec::Build::template_vecs, spec::Build::runtime},
                                       {spec::Build::template_width, spec::Build::runtime},
                                       {spec::Build::template_width, spec::Build::template_vecs}};

// The attributes the statements compare, in the order they name them.
constexpr const char* kAttributes[] = {"registers", "local_bytes", "shared_bytes", "blocks_per_sm"};

using CaseKey = std::tuple<std::string, std::string, std::vector<std::int64_t>>;  // op, dtype, shape
using CellKey = std::tuple<std::string, std::string, std::vector<std::int64_t>, std::string, std::string>;

std::map<std::pair<CaseKey, std::string>, json> attributes_by_build(const json& kernels) {
  std::map<std::pair<CaseKey, std::string>, json> out;
  if (!kernels.is_array()) return out;
  for (const auto& k : kernels)
    out[{CaseKey{k.value("op", ""), k.value("dtype", ""), k.value("shape", std::vector<std::int64_t>{})},
         k.value("build", "")}] = k;
  return out;
}

std::string verdict(const PairedRatio& pr, double threshold) {
  if (pr.visits == 0) return "unknown";
  if (pr.median >= 1 + threshold && pr.lo > 1) return "pays";
  if (pr.median <= 1 / (1 + threshold) && pr.hi < 1) return "costs";
  return "even";
}

// "registers 64 -> 40, blocks/SM 1 -> 2" (reference -> candidate), the attributes that differ;
// empty when none does or either side has none recorded.
std::string attribute_changes(const json& ref, const json& cand) {
  std::string out;
  for (const char* a : kAttributes) {
    if (!ref.contains(a) || !cand.contains(a)) return "";
    const auto x = ref[a].get<double>(), y = cand[a].get<double>();
    if (x == y) continue;
    const std::string name = std::string(a) == "blocks_per_sm" ? "blocks/SM"
                             : std::string(a) == "local_bytes"  ? "local bytes"
                             : std::string(a) == "shared_bytes" ? "shared bytes"
                                                                : a;
    out += (out.empty() ? "" : ", ") + name + " " + format_number("%g", x) + " -> " + format_number("%g", y);
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// One op's statement over its analysed cells.
std::string statement(const std::string& op, const std::vector<json>& cells, double threshold, bool label_timing) {
  std::vector<std::string> sentences;
  for (const Comparison& cmp : kComparisons) {
    const std::string build = spec::build_name(cmp.build), against = spec::build_name(cmp.against);
    std::vector<std::string> pays, costs, even;
    int explained = 0;
    for (const json& cell : cells)
      for (const json& c : cell["comparisons"]) {
        if (c["build"] != build || c["against"] != against) continue;
        std::string where = cell["dtype"].get<std::string>() + " " + shape_string(cell["shape"].get<Shape>());
        if (label_timing) {  // appended: GCC 12 warns falsely (-Wrestrict) on " " + std::string
          where += ' ';
          where += cell["cache"].get<std::string>();
          where += ' ';
          where += cell["timer"].get<std::string>();
        }
        const std::string v = c["verdict"];
        if (v == "even" || v == "unknown") {
          even.push_back(where);
          continue;
        }
        const std::string changes =
            attribute_changes(cell["builds"][against].value("attributes", json::object()),
                              cell["builds"][build].value("attributes", json::object()));
        if (!changes.empty()) ++explained;
        const std::string text = where + " (" + format_number("%.2fx", c["speedup"].get<double>()) + "; " +
                                 (changes.empty() ? "same registers, local and shared memory and blocks/SM" : changes) +
                                 ")";
        (v == "pays" ? pays : costs).push_back(text);
      }
    if (pays.empty() && costs.empty() && even.empty()) continue;
    std::string s = build + " against " + against + ": ";
    std::vector<std::string> parts;
    if (!pays.empty()) parts.push_back("pays at " + join(pays, ", "));
    if (!costs.empty()) parts.push_back("costs at " + join(costs, ", "));
    if (!even.empty()) parts.push_back("within " + format_number("%g", 100 * threshold) + "% at " + join(even, ", "));
    s += join(parts, "; ") + ".";
    const std::size_t decided = pays.size() + costs.size();
    if (decided > 0)
      s += explained == static_cast<int>(decided)
               ? " Every difference comes with a change in the attributes shown."
               : " At " + std::to_string(decided - explained) + " of " + std::to_string(decided) +
                     " the attributes are the same, so registers, spills and occupancy do not explain it there.";
    sentences.push_back(s);
  }
  if (sentences.empty()) return op + ": no build was timed beside another.";
  return op + ": " + join(sentences, " ");
}

}  // namespace

json analyse_spec(const std::vector<Record>& records, const json& kernels, double threshold) {
  const auto attributes = attributes_by_build(kernels);
  std::map<CellKey, std::map<std::string, const Record*>> cells;
  std::set<std::pair<std::string, std::string>> timings;
  for (const Record& r : records) {
    cells[CellKey{r.op, r.dtype, r.shape, r.cache, r.timer}][r.variant] = &r;
    timings.insert({r.cache, r.timer});
  }

  json out_cells = json::array();
  std::map<std::string, std::vector<json>> by_op;
  for (const auto& [key, builds] : cells) {
    const auto& [op, dtype, shape, cache, timer] = key;
    json cell = {{"op", op}, {"dtype", dtype}, {"shape", shape}, {"cache", cache}, {"timer", timer},
                 {"builds", json::object()}, {"comparisons", json::array()}};
    for (const auto& [name, r] : builds) {
      json b = {{"median_us", r->median_us}, {"q1_us", r->q1_us}, {"q3_us", r->q3_us}};
      const auto it = attributes.find({CaseKey{op, dtype, shape}, name});
      if (it != attributes.end()) {
        json a = json::object();
        for (const char* k : {"registers", "local_bytes", "shared_bytes", "blocks_per_sm", "threads", "kernel"})
          if (it->second.contains(k)) a[k] = it->second[k];
        b["attributes"] = a;
      }
      cell["builds"][name] = b;
    }
    for (const Comparison& cmp : kComparisons) {
      const auto cand = builds.find(spec::build_name(cmp.build)), ref = builds.find(spec::build_name(cmp.against));
      if (cand == builds.end() || ref == builds.end()) continue;
      const PairedRatio pr = paired_ratio(ref->second->samples_us, ref->second->sample_visits,
                                          cand->second->samples_us, cand->second->sample_visits);
      cell["comparisons"].push_back({{"build", spec::build_name(cmp.build)},
                                     {"against", spec::build_name(cmp.against)},
                                     {"speedup", pr.median},
                                     {"interval", {pr.lo, pr.hi}},
                                     {"interval_coverage", pr.coverage},
                                     {"visits", pr.visits},
                                     {"verdict", verdict(pr, threshold)}});
    }
    by_op[op].push_back(cell);
    out_cells.push_back(std::move(cell));
  }

  json statements = json::array();
  for (const auto& [op, list] : by_op)
    statements.push_back({{"op", op}, {"text", statement(op, list, threshold, timings.size() > 1)}});
  return {{"threshold", threshold}, {"cells", out_cells}, {"statements", statements}};
}

json analyse_spec_result(const Result& r, double threshold) {
  json kernels = json::array();
  const auto it = r.extra.find("spec");
  if (it != r.extra.end() && it->contains("kernels")) kernels = it->at("kernels");
  return analyse_spec(r.records, kernels, threshold);
}

}  // namespace kbench
