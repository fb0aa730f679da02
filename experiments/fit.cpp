#include "experiments/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "experiments/grid_analysis.hpp"
#include "kernels/rows/row_family.hpp"
#include "core/text.hpp"
#include "record/provenance.hpp"

namespace kbench {

namespace {

// Every threshold the fit searches, once: its name (as results and --hold/--set spell it) and
// its place in RuleParams and in RowRules. params_of, with_params, to_json, with_values and
// changed_from all walk this list, so a new threshold is one line here.
template <class F>
void for_each_threshold(F&& f) {
  using P = RuleParams;
  using R = rows::RowRules;
  f("split_below_divisor", &P::split_below_divisor, &R::split_below_divisor);
  f("split_above_width", &P::split_above_width, &R::split_above_width);
  f("split_all_sms_above_width", &P::split_all_sms_above_width, &R::split_all_sms_above_width);
  f("auto_resident_vecs", &P::auto_resident_vecs, &R::auto_resident_vecs);
  f("chunk_8192_per_sm", &P::chunk_8192_per_sm, &R::chunk_8192_per_sm);
  f("chunk_4096_per_sm", &P::chunk_4096_per_sm, &R::chunk_4096_per_sm);
  f("chunk_counts_rows", &P::chunk_counts_rows, &R::chunk_counts_rows);
  f("warp_max_vecs", &P::warp_max_vecs, &R::warp_max_vecs);
  f("eight_vectors_above", &P::eight_vectors_above, &R::eight_vectors_above);
  f("warp_min_rows_per_sm", &P::warp_min_rows_per_sm, &R::warp_min_rows_per_sm);
  f("wide_resident_rows_per_sm", &P::wide_resident_rows_per_sm, &R::wide_resident_rows_per_sm);
  f("one_vector_max_vecs", &P::one_vector_max_vecs, &R::one_vector_max_vecs);
}

// The goal of issue 15: held-out mean regret at most 2%, at most 10 cells more than 10% off.
constexpr double kGoalMeanRegret = 0.02;
constexpr int kGoalCellsOff = 10;
// split_below_divisor this large never splits (sms / it is 0).
constexpr int kNeverSplit = 1 << 20;

// r.<part>.<key> as text ("" when absent); UsageError when it is not a string (a result edited
// by hand must not end in a JSON type error).
std::string text_field(const nlohmann::json& part, const char* part_name, const char* key) {
  const auto it = part.find(key);
  if (it == part.end()) return "";
  if (!it->is_string()) throw UsageError(std::string(part_name) + "." + key + " must be a string");
  return it->get<std::string>();
}

std::string device_id(const Result& r) {
  const std::string uuid = text_field(r.device, "device", "uuid");
  return uuid.empty() ? text_field(r.device, "device", "name") : uuid;
}

std::set<std::tuple<std::string, std::int64_t, std::int64_t>> cell_set(const GridData& d) {
  std::set<std::tuple<std::string, std::int64_t, std::int64_t>> out;
  for (const GridTimes& c : d.cells) out.insert({c.dtype, c.rows, c.width});
  return out;
}

// The plan row_plan takes under the thresholds, by name, per cell.
PlanChooser chooser(const rows::RowRules& rules, const DeviceLimits& dev) {
  return [rules, dev](const GridTimes& c) {
    return rows::grid_plan_name(rows::row_plan(c.rows, c.width, parse_dtype(c.dtype), dev, rules), rules);
  };
}

struct Fitted {
  RuleParams params;
  RegretSummary on_fit;
};

// How many thresholds p sets differently from `now`.
int changed_from(const RuleParams& p, const RuleParams& now) {
  int n = 0;
  for_each_threshold([&](const char*, auto param, auto) { n += p.*param != now.*param; });
  return n;
}

// regret_of's mean and cells off for the search, without its per-cell records: the space holds
// about a million candidates, and naming each chosen plan (strings, a map lookup) was most of
// the time. A cell remembers the time of each plan it has been given, matched field by field,
// so a plan's name is built once per cell and plan. The mean adds the same regrets in the same
// order as regret_of, so the two agree to the last bit.
class SearchScorer {
 public:
  explicit SearchScorer(const GridData& d) : dev_(d.dev) {
    for (const GridTimes& c : d.cells) {
      const auto best = std::min_element(c.plan_us.begin(), c.plan_us.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
      cells_.push_back({&c, parse_dtype(c.dtype), best->second, {}});
    }
  }
  // false when the rule chooses a plan some cell did not time.
  bool score(const rows::RowRules& rules, double& mean, int& off) {
    double sum = 0;
    off = 0;
    for (Cell& cell : cells_) {
      const rows::RowPlan plan = rows::row_plan(cell.times->rows, cell.times->width, cell.dtype, dev_, rules);
      const double us = time_of(cell, plan, rules);
      if (us < 0) return false;
      const double regret = us / cell.best_us - 1;
      sum += regret;
      off += regret > kOffRegret;
    }
    mean = cells_.empty() ? 0 : sum / static_cast<double>(cells_.size());
    return true;
  }

 private:
  struct Seen {
    rows::RowPlan plan;
    double us;  // -1: not timed
  };
  struct Cell {
    const GridTimes* times;
    DType dtype;
    double best_us;
    std::vector<Seen> seen;
  };
  static double time_of(Cell& cell, const rows::RowPlan& plan, const rows::RowRules& rules) {
    for (const Seen& s : cell.seen)
      if (s.plan == plan) return s.us;
    const auto it = cell.times->plan_us.find(rows::grid_plan_name(plan, rules));
    cell.seen.push_back({plan, it == cell.times->plan_us.end() ? -1.0 : it->second});
    return cell.seen.back().us;
  }
  DeviceLimits dev_;
  std::vector<Cell> cells_;
};

// A candidate's place in the search's order: lower mean regret, then fewer cells off, then fewer
// thresholds changed from the current ones.
struct Standing {
  std::size_t index = 0;  // in the space
  double mean = 0;
  int off = 0, changed = 0;
};

bool ahead(const Standing& a, const Standing& b) {
  constexpr double kTie = 1e-12;
  if (std::fabs(a.mean - b.mean) > kTie) return a.mean < b.mean;
  return a.off != b.off ? a.off < b.off : a.changed < b.changed;
}

// The candidate with the lowest mean regret on `d`, then the fewest cells off, then the fewest
// thresholds changed from the current ones: a threshold the grid cannot see (one for float32
// in a bfloat16 grid) changes no regret, and must keep its current value rather than take the
// first the search meets; among full ties, the first in the space's order. A candidate that
// would choose a plan the grid did not time is skipped. The space is searched in contiguous
// pieces across the cores; each piece keeps its first best, and the pieces' bests are taken
// in order, so the answer is the serial loop's whatever the core count.
Fitted fit_on(const GridData& d, const rows::RowRules& base, const std::vector<std::string>& held) {
  const std::vector<RuleParams> space = rule_space(base, held);
  const RuleParams now = space.front();
  const RegretSummary now_summary = regret_of(d.cells, chooser(with_params(base, now), d.dev));
  std::map<std::int64_t, Standing> piece_best;  // by the piece's first index
  std::mutex piece_mutex;
  parallel_pieces(static_cast<std::int64_t>(space.size()) - 1, 4096, [&](std::int64_t begin, std::int64_t end) {
    SearchScorer scorer(d);
    std::optional<Standing> best;
    for (std::int64_t k = begin; k < end; ++k) {
      const auto i = static_cast<std::size_t>(k) + 1;  // space[0] is the current rule
      Standing s{i, 0, 0, changed_from(space[i], now)};
      if (!scorer.score(with_params(base, space[i]), s.mean, s.off)) continue;
      if (!best || ahead(s, *best)) best = s;
    }
    if (!best) return;
    const std::lock_guard<std::mutex> lock(piece_mutex);
    piece_best.emplace(begin, *best);
  });
  Standing best{0, now_summary.mean, now_summary.off, 0};
  for (const auto& [begin, s] : piece_best)
    if (ahead(s, best)) best = s;
  return {space[best.index], best.index == 0 ? now_summary : regret_of(d.cells, chooser(with_params(base, space[best.index]), d.dev))};
}

// The grid of one of the two files; its faults name the file.
GridData grid_of(const Result& r, const std::string& name) {
  try {
    device_id(r);
    text_field(r.meta, "meta", "started");
    return grid_data(r);
  } catch (const UsageError& e) {
    throw UsageError(name + ": " + e.what());
  }
}

void require_comparable(const Result& a, const Result& b, const GridData& ga, const GridData& gb) {
  if (device_id(a) != device_id(b))
    throw UsageError("fit: the grids come from different devices ('" + device_id(a) + "' and '" + device_id(b) + "')");
  if (ga.op != gb.op) throw UsageError("fit: the grids time different ops ('" + ga.op + "' and '" + gb.op + "')");
  if (cell_set(ga) != cell_set(gb)) throw UsageError("fit: the grids have different cells (not runs of one grid)");
  if (ga.cache != gb.cache || ga.timer != gb.timer)  // regrets under another timer or cache are not comparable
    throw UsageError("fit: the grids were timed differently (" + ga.cache + " " + ga.timer + " and " + gb.cache + " " +
                     gb.timer + ")");
  const std::string started = text_field(a.meta, "meta", "started");
  if (!started.empty() && started == text_field(b.meta, "meta", "started"))
    throw UsageError("fit: A and B are the same run (same start time); take two runs apart in time");
  try {
    rows::row_rules(ga.op);
  } catch (const std::invalid_argument&) {
    throw UsageError("fit: '" + ga.op + "' is not a row op");
  }
}

// A rule's figures on its held-out run, with the cells it still gets more than 10% wrong: what
// a next rule would have to fix.
nlohmann::json held_out_json(const RegretSummary& s) {
  nlohmann::json j = summary_json(s, false);
  j["meets_goal"] = s.mean <= kGoalMeanRegret && s.off <= kGoalCellsOff;
  j["off_cells"] = off_cells_json(s);
  return j;
}

}  // namespace

RuleParams params_of(const rows::RowRules& r) {
  RuleParams p;
  for_each_threshold([&](const char*, auto param, auto rule) { p.*param = r.*rule; });
  return p;
}

rows::RowRules with_params(rows::RowRules r, const RuleParams& p) {
  for_each_threshold([&](const char*, auto param, auto rule) { r.*rule = p.*param; });
  return r;
}

nlohmann::json to_json(const RuleParams& p) {
  nlohmann::json j = nlohmann::json::object();
  for_each_threshold([&](const char* name, auto param, auto) { j[name] = p.*param; });
  return j;
}

void validate_held(const std::vector<std::string>& held) {
  const nlohmann::json names = to_json(RuleParams{});
  for (const std::string& name : held)
    if (!names.contains(name)) throw UsageError("fit: --hold '" + name + "' is not a threshold the fit searches");
}

std::vector<RuleParams> rule_space(const rows::RowRules& current, const std::vector<std::string>& held) {
  validate_held(held);
  const RuleParams now = params_of(current);
  std::vector<RuleParams> space{now};
  // Every value of one threshold for every candidate so far; a held threshold keeps its
  // current value (to_json's key names it).
  const auto vary = [&](const char* name, auto member, const auto& values) {
    if (std::find(held.begin(), held.end(), name) != held.end()) return;  // space holds now's value
    std::vector<RuleParams> next;
    for (const RuleParams& p : space)
      for (const auto v : values) {
        RuleParams q = p;
        q.*member = v;
        next.push_back(q);
      }
    space.swap(next);
  };
  using W = std::vector<std::int64_t>;
  const std::vector<int> per_sm{0, 1, 2, 4, 8, 16};
  vary("split_below_divisor", &RuleParams::split_below_divisor, std::vector<int>{1, 2, 3, 4, 6, 8, kNeverSplit});
  vary("split_above_width", &RuleParams::split_above_width, W{8192, 16384, 32768, 65536});
  vary("split_all_sms_above_width", &RuleParams::split_all_sms_above_width, W{32768, 65536, rows::kMaxWidth});
  vary("auto_resident_vecs", &RuleParams::auto_resident_vecs, W{256, 512, 1024, 2048, 4096});
  vary("chunk_8192_per_sm", &RuleParams::chunk_8192_per_sm, per_sm);
  vary("chunk_4096_per_sm", &RuleParams::chunk_4096_per_sm, per_sm);
  vary("chunk_counts_rows", &RuleParams::chunk_counts_rows, std::vector<bool>{false, true});
  vary("warp_max_vecs", &RuleParams::warp_max_vecs, W{32, 64, 128, 256});
  // Off, or below 8 or 16 rows per SM: the grid's rows stop at 8 per SM (1056), so it sees
  // whether few rows take a block and whether 1056 rows still do; where the block stops past
  // that, 16, comes from the outside grid (2112 rows).
  vary("warp_min_rows_per_sm", &RuleParams::warp_min_rows_per_sm, std::vector<int>{0, 8, 16});
  // Off, or up to one or two rows per SM (one or two waves of 1024-thread blocks).
  vary("wide_resident_rows_per_sm", &RuleParams::wide_resident_rows_per_sm, std::vector<int>{0, 1, 2});
  // One vector a lane up to 8 (a 16-bit row's fewest lanes), 16 or 32 vectors (a whole warp).
  vary("one_vector_max_vecs", &RuleParams::one_vector_max_vecs, W{8, 16, 32});
  // eight_vectors_above varies only where the op's float32 blocks take 8 vectors.
  if (current.block_eight_vectors_f32) vary("eight_vectors_above", &RuleParams::eight_vectors_above, W{0, 128, 256, 512, 1024});
  // The current thresholds first (a tie keeps them), then the rest, 8192-element chunks never
  // reaching past 4096-element ones.
  std::vector<RuleParams> out{now};
  for (const RuleParams& p : space)
    if (p.chunk_4096_per_sm >= p.chunk_8192_per_sm && !(p == now)) out.push_back(p);
  return out;
}

RuleParams with_values(RuleParams p, const std::map<std::string, std::int64_t>& values) {
  for (const auto& [name, v] : values) {
    bool known = false;
    for_each_threshold([&](const char* threshold, auto param, auto) {
      if (name != threshold) return;
      known = true;
      p.*param = static_cast<std::remove_reference_t<decltype(p.*param)>>(v);  // bool: v != 0
    });
    if (!known) throw UsageError("fit: --set '" + name + "' is not a threshold the fit searches");
  }
  return p;
}

std::map<std::string, std::int64_t> parse_set_values(const std::vector<std::string>& texts) {
  std::map<std::string, std::int64_t> out;
  for (const std::string& t : texts) {
    const auto eq = t.find('=');
    const std::string name = t.substr(0, eq);
    if (eq == std::string::npos || name.empty())
      throw UsageError("fit: --set takes NAME=VALUE, e.g. warp_max_vecs=64 (got '" + t + "')");
    validate_held({name});
    const std::string value = t.substr(eq + 1);
    const auto v = parse_whole(value, 0, std::int64_t{1} << 40);
    if (!v) throw UsageError("fit: --set " + name + " needs a whole number from 0 to 2^40 (got '" + value + "')");
    if (!out.emplace(name, *v).second) throw UsageError("fit: --set names '" + name + "' twice");
  }
  return out;
}

nlohmann::json fit_grids(const Result& a, const Result& b, const std::string& a_name, const std::string& b_name,
                         const std::vector<std::string>& held_now, const std::map<std::string, std::int64_t>& set) {
  const GridData ga = grid_of(a, a_name), gb = grid_of(b, b_name);
  require_comparable(a, b, ga, gb);
  const rows::RowRules& compiled = rows::row_rules(ga.op);
  const RuleParams current = params_of(compiled);
  // Thresholds given a value by --set are held at it: the search starts from those values, and
  // the current rule it must beat stays the compiled one.
  std::vector<std::string> held = held_now;
  for (const auto& [name, value] : set) {
    if (std::find(held.begin(), held.end(), name) != held.end())
      throw UsageError("fit: '" + name + "' is both held at its current value and --set");
    held.push_back(name);
  }
  const rows::RowRules base = with_params(compiled, with_values(current, set));
  const RegretSummary cur_a = regret_of(ga.cells, chooser(compiled, ga.dev));
  const RegretSummary cur_b = regret_of(gb.cells, chooser(compiled, gb.dev));
  const double noise = std::fabs(cur_a.mean - cur_b.mean);

  struct Direction {
    Fitted fitted;
    RegretSummary held_out, current_held_out;
    bool passes = false;
  };
  const auto direction = [&](const GridData& fit, const GridData& judge, const RegretSummary& cur_judge) {
    Direction d{fit_on(fit, base, held), {}, cur_judge, false};
    d.held_out = regret_of(judge.cells, chooser(with_params(base, d.fitted.params), judge.dev));
    d.passes = d.held_out.untimed.empty() && !(d.fitted.params == current) &&
               cur_judge.mean - d.held_out.mean > noise;
    return d;
  };
  const Direction ab = direction(ga, gb, cur_b), ba = direction(gb, ga, cur_a);
  const bool adopt = ab.passes && ba.passes;
  // Of the two fitted rules, the one with the lower mean regret over both runs.
  const auto both_runs = [&](const RuleParams& p) {
    return (regret_of(ga.cells, chooser(with_params(base, p), ga.dev)).mean +
            regret_of(gb.cells, chooser(with_params(base, p), gb.dev)).mean) / 2;
  };
  const bool take_ab = both_runs(ab.fitted.params) <= both_runs(ba.fitted.params);
  const Direction& chosen = take_ab ? ab : ba;
  const auto direction_json = [&](const Direction& d, const std::string& fit_name, const std::string& judge_name) {
    return nlohmann::json{{"fitted_on", fit_name},
                          {"judged_on", judge_name},
                          {"thresholds", to_json(d.fitted.params)},
                          {"regret_on_fit_run", summary_json(d.fitted.on_fit, false)},
                          {"held_out", held_out_json(d.held_out)},
                          {"current_on_held_out", summary_json(d.current_held_out, false)},
                          {"gain", d.current_held_out.mean - d.held_out.mean},
                          {"beats_current_by_more_than_noise", d.passes}};
  };
  std::string why = adopt ? "both fitted rules beat the current rule on their held-out run by more than the "
                            "current rule's A-vs-B difference"
                          : "a fitted rule did not beat the current rule on its held-out run by more than the current "
                            "rule's A-vs-B difference (or the current thresholds were fitted)";
  return {{"op", ga.op},
          {"a", a_name},
          {"b", b_name},
          {"current", {{"thresholds", to_json(current)},
                       {"a", summary_json(cur_a, false)},
                       {"b", summary_json(cur_b, false)}}},
          {"noise", noise},
          {"candidates", rule_space(base, held).size()},
          {"held", held_now},
          {"set", set},
          {"a_to_b", direction_json(ab, a_name, b_name)},
          {"b_to_a", direction_json(ba, b_name, a_name)},
          {"decision", {{"adopt", adopt},
                        {"why", why},
                        {"thresholds", to_json(adopt ? chosen.fitted.params : current)},
                        {"held_out", held_out_json(adopt ? chosen.held_out : cur_b)},
                        {"goal", {{"mean_regret_at_most", kGoalMeanRegret}, {"cells_off_at_most", kGoalCellsOff}}}}}};
}

Result fit_result(const Result& a, const Result& b, const std::string& a_name, const std::string& b_name,
                  const std::vector<std::string>& argv, const std::vector<std::string>& held,
                  const std::map<std::string, std::int64_t>& set) {
  Result r;
  r.experiment = "fit";
  r.meta = provenance();
  r.meta["argv"] = argv;
  r.meta["started"] = utc_now();
  r.meta["seed"] = 0;
  r.meta["settings"] = {{"a", a_name}, {"b", b_name}, {"held", held}, {"set", set}};
  r.device = a.device;
  r.extra["fit"] = fit_grids(a, b, a_name, b_name, held, set);
  r.manifest = {{"algorithm", "sha256"}, {"files", nlohmann::json::object()}, {"measured", nlohmann::json::object()}};
  r.meta["finished"] = utc_now();
  return r;
}

}  // namespace kbench
