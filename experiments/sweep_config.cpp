#include "experiments/sweep_config.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

#include "core/errors.hpp"

namespace kbench {

namespace {

std::vector<std::string> parse_modes(const std::string& text, const char* a, const char* b,
                                     const char* what) {
  if (text == a) return {a};
  if (text == b) return {b};
  if (text == "both") return {a, b};
  throw UsageError(std::string("unknown ") + what + " '" + text + "' (expected " + a + ", " + b +
                   " or both)");
}

template <class T>
T field(const nlohmann::json& j, const char* key, const std::string& where, T fallback) {
  return config_field(j, key, where, std::move(fallback));
}

std::vector<std::string> mode_list(const nlohmann::json& j, const char* key, const std::string& where,
                                   std::vector<std::string> fallback,
                                   std::vector<std::string> (*parse)(const std::string&)) {
  if (!j.contains(key)) return fallback;
  std::vector<std::string> out;
  const auto& v = j.at(key);
  if (v.is_string()) return parse(v.get<std::string>());
  if (!v.is_array()) throw UsageError(where + ": field '" + key + "' must be a string or a list");
  for (const auto& m : v) {
    if (!m.is_string()) throw UsageError(where + ": field '" + key + "' must list strings");
    for (const auto& one : parse(m.get<std::string>())) out.push_back(one);
  }
  return out;
}

}  // namespace

std::vector<std::string> parse_cache_modes(const std::string& text) {
  return parse_modes(text, "cold", "warm", "cache mode");
}

std::vector<std::string> parse_timers(const std::string& text) {
  return parse_modes(text, "events", "graph", "timer");
}

nlohmann::json read_config_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw UsageError("cannot read config '" + file.string() + "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError("config '" + file.string() + "' is not valid JSON (byte " +
                     std::to_string(e.byte) + ")");
  }
  if (!j.is_object()) throw UsageError("config '" + file.string() + "': expected a JSON object");
  return j;
}

SweepSettings load_sweep_config(const std::filesystem::path& file) {
  const nlohmann::json j = read_config_json(file);
  const std::string where = "config '" + file.string() + "'";
  SweepSettings s;
  s.config_path = file.string();
  s.experiment = field<std::string>(j, "experiment", where, s.experiment);
  s.description = field<std::string>(j, "description", where, "");
  s.visits = field<int>(j, "visits", where, s.visits);
  s.samples = field<int>(j, "samples", where, s.samples);
  s.seed = field<std::uint64_t>(j, "seed", where, s.seed);
  s.caches = mode_list(j, "cache", where, s.caches, parse_cache_modes);
  s.timers = mode_list(j, "timer", where, s.timers, parse_timers);
  if (!j.contains("cases") || !j["cases"].is_array() || j["cases"].empty())
    throw UsageError(where + ": needs a non-empty 'cases' list");
  for (std::size_t i = 0; i < j["cases"].size(); ++i) {
    const auto& c = j["cases"][i];
    const std::string cw = where + " case " + std::to_string(i);
    CaseSpec spec;
    spec.op = field<std::string>(c, "op", cw, "");
    if (spec.op.empty()) throw UsageError(cw + ": needs an 'op'");
    for (const auto& d : field<std::vector<std::string>>(c, "dtypes", cw, {"float32"}))
      spec.dtypes.push_back(parse_dtype(d));
    spec.shapes = field<std::vector<std::vector<std::int64_t>>>(c, "shapes", cw, {});
    if (spec.shapes.empty()) throw UsageError(cw + ": needs a non-empty 'shapes' list");
    spec.variants = field<std::vector<std::string>>(c, "variants", cw, {});
    spec.params = field<std::map<std::string, double>>(c, "params", cw, {});
    s.cases.push_back(std::move(spec));
  }
  if (s.visits < 1 || s.samples < 1) throw UsageError(where + ": visits and samples must be >= 1");
  return s;
}

}  // namespace kbench
