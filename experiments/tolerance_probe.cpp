#include "experiments/tolerance_probe.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/errors.hpp"
#include "device/device_info.hpp"
#include "harness/prepare.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {

namespace {

// FNV-1a of a case's label and seed index, mixed with the base seed: each set of inputs has a
// seed of its own that does not depend on which other cases were selected.
std::uint64_t inputs_seed(std::uint64_t base, const Case& c, int seed) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char ch : case_label(c) + "#" + std::to_string(seed)) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ULL;
  }
  return h ^ base;
}

bool selected(const std::vector<std::string>& names, const std::string& name) {
  return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

// Every planned check, N seeds each, on the current device and `stream`.
ShareTable probe_shares(const ToleranceSettings& s, const std::vector<ProbeCase>& cases, cudaStream_t stream) {
  ShareTable table;
  for (const ProbeCase& pc : cases) {
    const Problem& problem = registry().op(pc.c.op);
    spdlog::debug("probing {}", case_label(pc.c));
    for (int seed = 0; seed < s.seeds; ++seed) {
      Rng rng(inputs_seed(s.seed, pc.c, seed));
      const PreparedCase prepared = prepare_case(problem, pc.c, rng);
      for (const Variant* v : pc.variants) {
        const CheckInfo info = check_variant(prepared, *v, stream);
        table.add(ProbeCheck{pc.c.op, v->name, pc.c.dtype, pc.c.shape, pc.c.input_kind, seed, info.share,
                             info.detail, v->baseline, info.max_err, info.tolerance, pc.c.params});
      }
    }
  }
  return table;
}

nlohmann::json settings_json(const ToleranceSettings& s, const std::vector<ProbeCase>& cases) {
  nlohmann::json dtypes = nlohmann::json::array();
  for (const DType d : s.dtypes) dtypes.push_back(dtype_name(d));
  std::vector<Shape> shapes = probe_shapes(1);
  for (const Shape& shape : probe_shapes(2)) shapes.push_back(shape);
  for (const Shape& shape : probe_shapes(3)) shapes.push_back(shape);
  // Empty lists select everything; "cases" is how many (op, dtype, input kind, shape) ran.
  return {{"seeds", s.seeds}, {"ops", s.ops},       {"variants", s.variants}, {"dtypes", dtypes},
          {"seed", s.seed},   {"device", s.device}, {"shapes", shapes},       {"cases", cases.size()}};
}

}  // namespace

std::vector<Shape> probe_shapes(std::size_t rank) {
  if (rank == 1) return {{1}, {1000}, {65537}};
  if (rank == 2) return {{1, 1}, {7, 64}, {3, 1000}, {5, 8193}, {2, 32769}};
  // [M, N, K]: a single product, ragged tiles with rows off 16-byte boundaries (the SIMT path)
  // and on them (the tensor-core kernels' zero-filled edges), and a long K.
  if (rank == 3) return {{1, 1, 1}, {33, 17, 9}, {127, 255, 65}, {127, 248, 72}, {64, 72, 1024}};
  return {};
}

std::vector<ProbeCase> plan_tolerance_probe(const ToleranceSettings& s) {
  if (s.seeds <= 0) throw UsageError("--tolerance-probe expects a positive number of seeds");
  for (const auto& name : s.ops) registry().op(name);  // UsageError for an unknown op
  std::vector<ProbeCase> cases;
  std::vector<std::string> variants_seen;
  for (const Op& op : registry().ops()) {
    if (!selected(s.ops, op.name)) continue;
    for (const DType dt : kAllDTypes) {
      if (!s.dtypes.empty() && std::find(s.dtypes.begin(), s.dtypes.end(), dt) == s.dtypes.end()) continue;
      for (const InputKind kind : op.input_kinds)
        for (const Shape& shape : probe_shapes(op.shape_rank)) {
          ProbeCase pc{make_case(op, dt, shape), {}};
          pc.c.input_kind = kind;
          for (const Variant* v : registry().variants(op.name))
            if (selected(s.variants, v->name) && v->unsupported(pc.c).empty()) {
              pc.variants.push_back(v);
              variants_seen.push_back(v->name);
            }
          if (!pc.variants.empty()) cases.push_back(std::move(pc));
        }
    }
  }
  for (const auto& name : s.variants)
    if (std::find(variants_seen.begin(), variants_seen.end(), name) == variants_seen.end())
      throw UsageError("unknown variant '" + name + "' (no selected op has it on the probe's shapes)");
  if (cases.empty()) throw UsageError("the tolerance probe has no case to run for this selection");
  return cases;
}

ShareTable run_tolerance_probe(const ToleranceSettings& s, const std::vector<ProbeCase>& cases) {
  select_device(s.device);
  return probe_shares(s, cases, nullptr);
}

Experiment tolerance_experiment(const ToleranceSettings& s, const std::vector<ProbeCase>& cases) {
  Experiment e;
  e.name = "tolerance";
  e.sources = {"experiments/tolerance"};  // tolerance_probe.* and tolerance_shares.*
  e.settings = settings_json(s, cases);
  // No cases of the runner's, so no visits; the timer floors it takes around them use these.
  e.how = Measurement{{"warm"}, {"events"}, 1, 10, s.seed, s.device};
  for (const ProbeCase& pc : cases) e.own_op_sources[pc.c.op] = registry().op(pc.c.op).sources;
  e.time_own = [s, cases, settings = e.settings](cudaStream_t stream, Result& r) {
    const ShareTable table = probe_shares(s, cases, stream);
    for (Record& rec : share_records(table)) r.records.push_back(std::move(rec));
    r.extra["tolerance"] = share_extra(table, settings);
  };
  return e;
}

}  // namespace kbench
