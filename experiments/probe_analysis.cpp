#include "experiments/probe_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/errors.hpp"
#include "core/stats.hpp"

namespace kbench {
namespace {

using nlohmann::json;

double time_of(const ProbeSample& s) { return s.us; }
double clock_of(const ProbeSample& s) { return s.sm_mhz; }

json number_or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

double median_of(std::vector<double> values) { return values.empty() ? NAN : quantile(std::move(values), 0.5); }

// The second half of every window, by sample count: warm by then whatever the pause was.
double steady_value(const std::vector<ProbeSeries>& series, double (*value)(const ProbeSample&)) {
  std::vector<double> late;
  for (const auto& s : series)
    for (std::size_t i = s.samples.size() / 2; i < s.samples.size(); ++i) late.push_back(value(s.samples[i]));
  return median_of(late);
}

std::string format(const char* pattern, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, value);
  return buf;
}

std::string statement(const json& a, double kbench_warmup_min_ms) {
  // The worst first sample, not the median over repetitions: "up to" is what a run may meet.
  double worst_slowdown = 0, worst_pause = 0;
  const double steady = a["steady_us"].get<double>();
  for (const auto& p : a["pauses"])
    if (p["first_us_max"].get<double>() / steady > worst_slowdown) {
      worst_slowdown = p["first_us_max"].get<double>() / steady;
      worst_pause = p["pause_s"].get<double>();
    }
  const std::string tolerance = format("%g%%", 100 * a["tolerance"].get<double>());
  std::string text = "The first sample after a pause took up to " + format("%.2f", worst_slowdown) +
                     "x the steady time (after the " + format("%g", worst_pause) + " s pause); ";
  const json& needed = a["warmup_needed_ms"];
  if (needed.is_null())
    return text + "some series never settled within " + tolerance +
           " of steady in their window: a warm-up must be longer than the window, and kbench's (" +
           format("%g", kbench_warmup_min_ms) + " ms minimum) is not shown to suffice.";
  const double ms = needed.get<double>();
  return text + "every series settled within " + tolerance + " of steady after at most " + format("%.1f", ms) +
         " ms of load, so a warm-up needs at least that; kbench's minimum of " + format("%g", kbench_warmup_min_ms) +
         " ms " + (kbench_warmup_min_ms >= ms ? "covers it." : "does not, and must grow.");
}

}  // namespace

void require_sorted_pauses(const std::vector<double>& pauses_s) {
  if (pauses_s.empty()) throw UsageError("--pauses needs at least one pause");
  for (std::size_t i = 0; i < pauses_s.size(); ++i) {
    if (!std::isfinite(pauses_s[i]) || pauses_s[i] < 0 || pauses_s[i] > kMaxPauseS)
      throw UsageError("pauses must be seconds from 0 to 3600 (an hour), got " + format("%g", pauses_s[i]));
    if (i > 0 && pauses_s[i] <= pauses_s[i - 1])
      throw UsageError("pauses must be given in increasing order, got " + format("%g", pauses_s[i]) + " after " +
                       format("%g", pauses_s[i - 1]));
  }
}

std::optional<double> settle_ms(const ProbeSeries& s, double steady, double tolerance,
                                double (*value)(const ProbeSample&)) {
  const auto& v = s.samples;
  const auto inside = [&](std::size_t i) { return std::fabs(value(v[i]) - steady) <= tolerance * steady; };
  if (v.empty() || !inside(v.size() - 1)) return std::nullopt;
  std::size_t settled = 0;  // the sample after the last one that counts as outside
  for (std::size_t i = 0; i + 1 < v.size(); ++i) {
    if (inside(i)) continue;
    const bool lone = i > 0 && inside(i - 1) && inside(i + 1);
    if (!lone) settled = i + 1;
  }
  return v[settled].since_ms;
}

json analyse_probe(const std::vector<ProbeSeries>& series, double tolerance, double kbench_warmup_min_ms) {
  const double steady_us = steady_value(series, time_of);
  const double steady_mhz = steady_value(series, clock_of);
  std::map<double, std::vector<const ProbeSeries*>> by_pause;
  for (const auto& s : series)
    if (!s.samples.empty()) by_pause[s.pause_s].push_back(&s);

  json pauses = json::array();
  std::optional<double> needed = 0.0;
  for (const auto& [pause, list] : by_pause) {
    std::vector<double> first_us, first_mhz, first_nvml;
    std::optional<double> settle = 0.0, clock_settle = 0.0;
    std::size_t within = 0, count = 0;
    for (const ProbeSeries* s : list) {
      const ProbeSample& first = s->samples.front();
      first_us.push_back(first.us);
      first_mhz.push_back(first.sm_mhz);
      if (first.nvml_mhz) first_nvml.push_back(*first.nvml_mhz);
      const auto t = settle_ms(*s, steady_us, tolerance, time_of);
      const auto c = settle_ms(*s, steady_mhz, tolerance, clock_of);
      settle = settle && t ? std::optional(std::max(*settle, *t)) : std::nullopt;
      clock_settle = clock_settle && c ? std::optional(std::max(*clock_settle, *c)) : std::nullopt;
      for (const auto& x : s->samples) within += std::fabs(x.us - steady_us) <= tolerance * steady_us;
      count += s->samples.size();
    }
    needed = needed && settle ? std::optional(std::max(*needed, *settle)) : std::nullopt;
    const double first = median_of(first_us);
    pauses.push_back({{"pause_s", pause},
                      {"repetitions", list.size()},
                      {"first_us", first},
                      {"first_us_max", *std::max_element(first_us.begin(), first_us.end())},
                      {"first_slowdown", first / steady_us},
                      {"first_sm_mhz", median_of(first_mhz)},
                      {"first_nvml_mhz", first_nvml.empty() ? json(nullptr) : json(median_of(first_nvml))},
                      {"settle_ms", number_or_null(settle)},
                      {"clock_settle_ms", number_or_null(clock_settle)},
                      {"share_within", static_cast<double>(within) / static_cast<double>(count)}});
  }
  json out = {{"tolerance", tolerance},
              {"steady_us", steady_us},
              {"steady_sm_mhz", steady_mhz},
              {"pauses", pauses},
              {"warmup_needed_ms", by_pause.empty() ? json(nullptr) : number_or_null(needed)},
              {"kbench_warmup_min_ms", kbench_warmup_min_ms}};
  out["statement"] = by_pause.empty() ? "no samples" : statement(out, kbench_warmup_min_ms);
  return out;
}

json series_to_json(const ProbeSeries& s) {
  json since = json::array(), us = json::array(), mhz = json::array(), nvml = json::array();
  for (const auto& x : s.samples) {
    since.push_back(x.since_ms);
    us.push_back(x.us);
    mhz.push_back(x.sm_mhz);
    nvml.push_back(number_or_null(x.nvml_mhz));
  }
  return {{"pause_s", s.pause_s}, {"repetition", s.repetition}, {"position", s.position},
          {"since_ms", since},    {"us", us},                   {"sm_mhz", mhz},
          {"nvml_mhz", nvml}};
}

ProbeSeries series_from_json(const json& j) {
  ProbeSeries s;
  s.pause_s = j.at("pause_s").get<double>();
  s.repetition = j.at("repetition").get<int>();
  s.position = j.at("position").get<int>();
  const auto& since = j.at("since_ms");
  const auto& us = j.at("us");
  const auto& mhz = j.at("sm_mhz");
  const auto& nvml = j.at("nvml_mhz");
  for (std::size_t i = 0; i < us.size(); ++i)
    s.samples.push_back({since.at(i).get<double>(), us.at(i).get<double>(),
                         mhz.at(i).is_number() ? mhz.at(i).get<double>() : NAN,
                         nvml.at(i).is_number() ? std::optional(nvml.at(i).get<double>()) : std::nullopt});
  return s;
}

}  // namespace kbench
