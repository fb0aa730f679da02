#include "report/compare_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "core/errors.hpp"
#include "core/shape.hpp"
#include "core/stats.hpp"
#include "core/text.hpp"
#include "report/legend.hpp"
#include "report/markdown.hpp"

namespace kbench {
namespace {

// Fixed, so that the same two files always give the same intervals and verdicts.
constexpr std::uint64_t kBootstrapSeed = 1;

using CaseKey = std::tuple<std::string, std::string, std::string, std::vector<std::int64_t>,
                           std::map<std::string, double>, std::string, std::string>;

CaseKey key_of(const Record& r) { return {r.op, r.variant, r.dtype, r.shape, r.params, r.cache, r.timer}; }

std::string format(const char* pattern, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, value);
  return buf;
}

std::string params_text(const Record& r) {
  std::string text;
  for (const auto& [name, value] : r.params) text += (text.empty() ? "" : " ") + name + "=" + format("%g", value);
  return text.empty() ? "—" : text;
}

std::string case_name(const Record& r) {
  std::string text = r.op + " " + r.variant + " " + shape_string(r.shape) + " " + r.dtype;
  if (!r.params.empty()) text += " " + params_text(r);
  return text + " " + r.cache + " " + r.timer;
}

// The timed records of a file by case; a case recorded twice keeps its later record, as report
// shows it.
std::map<CaseKey, const Record*> by_case(const Result& r) {
  std::map<CaseKey, const Record*> out;
  for (const Record& rec : r.records)
    if (is_timed(rec)) out[key_of(rec)] = &rec;
  return out;
}

void require_positive_median(const Record& r, const char* which) {
  if (!(std::isfinite(r.median_us) && r.median_us > 0))
    throw UsageError(std::string("file ") + which + ": " + case_name(r) + " has median_us " +
                     format("%g", r.median_us) + ", not a time that can be compared");
}

// Paired by visit only where both runs followed one schedule: the same seed (so visit i took
// the same place in both shuffled orders, and drift over a run cancels in the pair) and the
// same visits, each sample labelled with its visit.
bool shares_visits(const Result& ra, const Record& a, const Result& rb, const Record& b) {
  const auto seed_a = ra.meta.find("seed"), seed_b = rb.meta.find("seed");
  if (seed_a == ra.meta.end() || seed_b == rb.meta.end() || *seed_a != *seed_b) return false;
  if (a.sample_visits.empty() || a.sample_visits.size() != a.samples_us.size() ||
      b.sample_visits.size() != b.samples_us.size())
    return false;
  return std::set<int>(a.sample_visits.begin(), a.sample_visits.end()) ==
         std::set<int>(b.sample_visits.begin(), b.sample_visits.end());
}

// The verdict of B against A. "slower": the interval lies above 1 and the ratio above the noise
// band; "faster": the interval below 1 and the ratio below the band; else "same". Without
// samples (no interval) the band alone decides.
std::string verdict_of(const CaseComparison& c, double noise_pct) {
  const double band = noise_pct / 100;
  const bool interval = c.lo > 0 || c.hi > 0;
  if (c.ratio > 1 + band && (!interval || c.lo > 1)) return "slower";
  if (c.ratio < 1 - band && (!interval || c.hi < 1)) return "faster";
  return "same";
}

std::string file_line(const char* which, const ReportInput& in) {
  const auto text = [&](const char* key) {
    const auto it = in.result.meta.find(key);
    return it != in.result.meta.end() && it->is_string() ? it->get<std::string>() : std::string("—");
  };
  std::string commit = "—";
  const auto git = in.result.meta.find("git");
  if (git != in.result.meta.end() && git->is_object() && git->contains("commit") && (*git)["commit"].is_string())
    commit = (*git)["commit"].get<std::string>().substr(0, 12);
  return std::string(which) + ": " + markdown_text(in.path) + " (" + markdown_text(in.result.experiment) +
         ", started " + markdown_text(text("started")) + ", git " + markdown_text(commit) + ", " + std::to_string(in.result.records.size()) + " records)\n";
}

}  // namespace

Comparison compare_results(const Result& a, const Result& b, double noise_pct) {
  const auto cases_a = by_case(a), cases_b = by_case(b);
  Comparison out;
  for (const Record& rec : a.records) {
    if (!is_timed(rec)) continue;
    const CaseKey key = key_of(rec);
    if (cases_a.at(key) != &rec) continue;  // a case recorded twice: its later record only
    const auto it = cases_b.find(key);
    if (it == cases_b.end()) {
      out.only_a.push_back(&rec);
      continue;
    }
    const Record& rb = *it->second;
    require_positive_median(rec, "A");
    require_positive_median(rb, "B");
    CaseComparison c;
    c.a = &rec, c.b = &rb, c.ratio = rb.median_us / rec.median_us;
    // Both intervals come from core/stats: where the runs share visits, the exact order-statistic
    // interval of the median of per-visit ratios B/A, whose coverage is stated (75% at 3 visits);
    // otherwise a bootstrap of the ratio of the two samples' medians, nominally 95% but treating
    // samples of one visit as independent. The noise band (verdict_of) guards against both.
    if (shares_visits(a, rec, b, rb)) {
      const PairedRatio pr = paired_ratio(rb.samples_us, rb.sample_visits, rec.samples_us, rec.sample_visits);
      c.lo = pr.lo, c.hi = pr.hi, c.visits = pr.visits, c.coverage = pr.coverage;
    } else {
      const PairedRatio sr = sample_ratio(rb.samples_us, rec.samples_us, kBootstrapSeed);
      c.lo = sr.lo, c.hi = sr.hi, c.coverage = sr.coverage;
    }
    c.verdict = verdict_of(c, noise_pct);
    (c.verdict == "faster" ? out.faster : c.verdict == "slower" ? out.slower : out.same) += 1;
    out.cases.push_back(c);
  }
  for (const auto& [key, rec] : cases_b)
    if (!cases_a.count(key)) out.only_b.push_back(rec);
  return out;
}

std::vector<const CaseComparison*> regressions(const Comparison& c, double pct) {
  std::vector<const CaseComparison*> out;
  for (const auto& k : c.cases)
    if (k.verdict == "slower" && (k.ratio - 1) * 100 > pct) out.push_back(&k);
  return out;
}

std::vector<Agreement> run_to_run_agreement(const Comparison& c, double min_us, double pct) {
  std::vector<Agreement> out;
  for (const auto& k : c.cases) {
    if (!(k.a->median_us > min_us && k.b->median_us > min_us)) continue;
    auto at = std::find_if(out.begin(), out.end(), [&](const Agreement& g) { return g.timer == k.a->timer; });
    if (at == out.end()) at = out.insert(out.end(), Agreement{k.a->timer});
    ++at->cases;
    const double apart = std::abs(k.ratio - 1);
    if (apart * 100 <= pct) ++at->within;
    if (!at->furthest || apart > std::abs(at->furthest->ratio - 1)) at->furthest = &k;
  }
  return out;
}

namespace {

// What each column of the comparison's table is: its legend is made from these.
const ColumnDefinitions& compare_columns() {
  static const ColumnDefinitions definitions({
      {"op", "the op"},
      {"variant", "the variant, timed in both runs"},
      {"shape", "the case's shape"},
      {"dtype", "the element type of the inputs and outputs"},
      {"params", "the op's parameters (name=value), if any"},
      {"cache", "cold: L2 flushed or the inputs rotated before each sample; warm: the inputs left in L2 by the "
                "sample before"},
      {"timer", "events, graph or cupti, as the records say"},
      {"A us", "A's median sample, in us"},
      {"B us", "B's median sample, in us"},
      {"B / A", "B us over A us: above 1, B is slower"},
      {"interval", "the ratio's interval (its coverage in brackets): the order-statistic interval of the median of "
                   "the per-visit ratios where the runs share visits, a 95% bootstrap of the two samples otherwise"},
      {"pairs", "what the interval pairs: \"N visits\" shared by both runs, or \"samples\" (the bootstrap)"},
      {"verdict", "B against A: slower where the interval lies above 1 and the ratio above the noise band, faster "
                  "where both lie below it, else same"},
  });
  return definitions;
}

}  // namespace

std::string compare_markdown(const ReportInput& a, const ReportInput& b, const Comparison& c, double noise_pct) {
  std::string out = "# kbench compare\n\n" + file_line("A", a) + file_line("B", b) + "\n";
  // A case of a few microseconds moves with its run's floor, which differs between processes
  // (methodology.md, section 4): two runs of one binary a few seconds apart, whose graph floors
  // in the visits differed by 14%, had rmsnorm's 4x32769 and 128x32769 cells 3-9% "faster" in
  // graph mode (session 33). The floors come before the cases, so that such a ratio is read
  // beside them.
  if (const std::string floors = timer_floors({a, b}); !floors.empty())
    out += floors + "A case within a few floors of its run's floor moves with it: where the two runs' floors differ, "
                    "read its ratio with them in view.\n\n";
  out += "B / A: B's median over A's, above 1 when B is slower; the interval is the order-statistic interval of the "
         "median of per-visit ratios where the runs share visits (\"N visits\", its coverage in the column), a 95% "
         "bootstrap of the two samples otherwise. Verdict (of B): slower when "
         "the interval lies above 1 and the ratio above 1 + " + format("%g", noise_pct) +
         "%, faster when both lie below (1 - the band), else same.\n\n";
  const std::vector<ShownColumn> columns = {{"op"},    {"variant"}, {"shape"},    {"dtype"}, {"params"},
                                            {"cache"}, {"timer"},   {"A us"},     {"B us"},  {"B / A"},
                                            {"interval"}, {"pairs"}, {"verdict"}};
  const std::string legend = compare_columns().legend(columns);
  out += markdown_row(ColumnDefinitions::titles(columns));
  out += markdown_row(std::vector<std::string>(columns.size(), "---"));
  for (const auto& k : c.cases) {
    const bool interval = k.lo > 0 || k.hi > 0;
    out += markdown_row({k.a->op, k.a->variant, shape_string(k.a->shape), k.a->dtype, params_text(*k.a),
                         k.a->cache, k.a->timer, format("%.3f", k.a->median_us), format("%.3f", k.b->median_us),
                         format("%.3f", k.ratio),
                         interval ? format("%.3f", k.lo) + " – " + format("%.3f", k.hi) + " (" +
                                        format_number("%g", 100 * k.coverage) + "%)"
                                  : "—",
                         k.visits ? std::to_string(k.visits) + " visits" : "samples", k.verdict});
  }
  out += "\nColumns:\n\n" + legend;
  for (const auto& [title, list] : {std::make_pair("A", &c.only_a), std::make_pair("B", &c.only_b)}) {
    if (list->empty()) continue;
    out += std::string("\nOnly in ") + title + " (not compared):\n\n";
    for (const Record* r : *list) out += "- " + case_name(*r) + "\n";
  }
  out += "\n" + std::to_string(c.faster) + " faster, " + std::to_string(c.slower) + " slower, " +
         std::to_string(c.same) + " same; " + std::to_string(c.only_a.size()) + " only in A, " +
         std::to_string(c.only_b.size()) + " only in B\n";
  const std::vector<Agreement> agreement = run_to_run_agreement(c);
  if (!agreement.empty())
    out += "\nRun to run (cases above " + format("%g", kAgreementMinUs) + " us in both; B's median within " +
           format("%g", kAgreementPct) + "% of A's):\n\n";
  for (const Agreement& g : agreement)
    out += "- " + g.timer + ": " + std::to_string(g.within) + " of " + std::to_string(g.cases) + " (" +
           format("%.1f", 100 * g.share()) + "%); furthest " + format("%+.2f", 100 * (g.furthest->ratio - 1)) +
           "% (" + case_name(*g.furthest->a) + ")\n";
  return out;
}

}  // namespace kbench
