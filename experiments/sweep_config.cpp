#include "experiments/sweep_config.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>

#include "core/errors.hpp"
#include "core/shape.hpp"

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

std::vector<std::vector<std::int64_t>> shape_list(const nlohmann::json& c, const std::string& where) {
  if (!c.contains("shapes") || !c["shapes"].is_array() || c["shapes"].empty())
    throw UsageError(where + ": needs a non-empty 'shapes' list");
  std::vector<std::vector<std::int64_t>> shapes;
  for (const auto& shape : c["shapes"]) {
    if (!shape.is_array() || shape.empty() || shape.size() > 3)
      throw UsageError(where + ": a shape is a list of 1 to 3 dimensions, got " + shape.dump());
    std::vector<std::int64_t> dims;
    for (const auto& d : shape) dims.push_back(whole_number(d, where + ": shape " + shape.dump(), 1, kMaxDim));
    shapes.push_back(std::move(dims));
  }
  return shapes;
}

// The experiment names a folder under --out: letters, digits, '_' and '-' only.
std::string experiment_name(const nlohmann::json& j, const std::string& where, std::string fallback) {
  const std::string name = field<std::string>(j, "experiment", where, fallback);
  const bool safe = !name.empty() && name.size() <= 64 && std::isalpha(static_cast<unsigned char>(name[0])) &&
                    std::all_of(name.begin(), name.end(), [](char ch) {
                      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
                    });
  if (!safe) throw UsageError(where + ": 'experiment' must be a plain name (letters, digits, '_', '-'), got '" + name + "'");
  return name;
}

}  // namespace

void require_known_keys(const nlohmann::json& j, const std::set<std::string>& known, const std::string& where) {
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw UsageError(where + ": unknown key '" + key + "' (expected one of " + list + ")");
    }
}

std::int64_t whole_number(const nlohmann::json& v, const std::string& what, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) ||
      v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
    throw UsageError(what + " must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", got " + v.dump());
  return v.get<std::int64_t>();
}

std::int64_t whole_field(const nlohmann::json& j, const char* key, const std::string& where, std::int64_t fallback,
                         std::int64_t lo, std::int64_t hi) {
  return j.contains(key) ? whole_number(j.at(key), where + ": '" + key + "'", lo, hi) : fallback;
}

std::vector<std::string> mode_list(const nlohmann::json& j, const char* key, const std::string& where,
                                   std::vector<std::string> fallback,
                                   std::vector<std::string> (*parse)(const std::string&)) {
  if (!j.contains(key)) return fallback;
  std::vector<std::string> out;
  const auto& v = j.at(key);
  if (v.is_string()) return parse(v.get<std::string>());
  if (!v.is_array()) throw UsageError(where + ": field '" + key + "' must be a string or a list");
  if (v.empty()) throw UsageError(where + ": field '" + key + "' lists nothing");
  for (const auto& m : v) {
    if (!m.is_string()) throw UsageError(where + ": field '" + key + "' must list strings");
    for (const auto& one : parse(m.get<std::string>())) {
      // A mode named twice would be timed twice (["cold", "both"]).
      if (std::find(out.begin(), out.end(), one) != out.end())
        throw UsageError(where + ": field '" + key + "' names '" + one + "' twice");
      out.push_back(one);
    }
  }
  return out;
}

std::vector<std::string> parse_cache_modes(const std::string& text) {
  return parse_modes(text, "cold", "warm", "cache mode");
}

std::vector<std::string> parse_timers(const std::string& text) {
  if (text == "cupti") return {"cupti"};
  if (text == "all") return {"events", "graph", "cupti"};
  try {
    return parse_modes(text, "events", "graph", "timer");
  } catch (const UsageError&) {
    throw UsageError("unknown timer '" + text + "' (expected events, graph, cupti, both (events and graph) or all)");
  }
}

namespace {

std::string read_config_text(const std::filesystem::path& file) {
  if (std::filesystem::is_directory(file)) throw UsageError("config '" + file.string() + "' is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("cannot read config '" + file.string() + "'");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

nlohmann::json parse_config_json(const std::string& text, const std::string& name) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError("config '" + name + "' is not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception&) {  // out_of_range: a number past double's range (fuzzing found 1e432)
    throw UsageError("config '" + name + "' holds a number too large to read");
  }
  if (!j.is_object()) throw UsageError("config '" + name + "': expected a JSON object");
  return j;
}

}  // namespace

nlohmann::json read_config_json(const std::filesystem::path& file) {
  return parse_config_json(read_config_text(file), file.string());
}

SweepSettings load_sweep_config(const std::filesystem::path& file) {
  return parse_sweep_config(read_config_text(file), file.string());
}

SweepSettings parse_sweep_config(const std::string& text, const std::string& name) {
  const nlohmann::json j = parse_config_json(text, name);
  const std::string where = "config '" + name + "'";
  require_known_keys(j, {"experiment", "description", "cases", "cache", "timer", "visits", "samples", "seed"}, where);
  SweepSettings s;
  s.config_path = name;
  s.experiment = experiment_name(j, where, s.experiment);
  s.description = field<std::string>(j, "description", where, "");
  s.visits = static_cast<int>(whole_field(j, "visits", where, s.visits, 1, kMaxVisitsOrSamples));
  s.samples = static_cast<int>(whole_field(j, "samples", where, s.samples, 1, kMaxVisitsOrSamples));
  s.seed = static_cast<std::uint64_t>(whole_field(j, "seed", where, static_cast<std::int64_t>(s.seed), 0,
                                                  std::numeric_limits<std::int64_t>::max()));
  s.caches = mode_list(j, "cache", where, s.caches, parse_cache_modes);
  s.timers = mode_list(j, "timer", where, s.timers, parse_timers);
  if (!j.contains("cases") || !j["cases"].is_array() || j["cases"].empty())
    throw UsageError(where + ": needs a non-empty 'cases' list");
  for (std::size_t i = 0; i < j["cases"].size(); ++i) {
    const auto& c = j["cases"][i];
    const std::string cw = where + " case " + std::to_string(i);
    if (!c.is_object()) throw UsageError(cw + ": expected a JSON object");
    require_known_keys(c, {"op", "dtypes", "shapes", "variants", "params"}, cw);
    CaseSpec spec;
    spec.op = field<std::string>(c, "op", cw, "");
    if (spec.op.empty()) throw UsageError(cw + ": needs an 'op'");
    for (const auto& d : field<std::vector<std::string>>(c, "dtypes", cw, {"float32"}))
      spec.dtypes.push_back(parse_dtype(d));
    spec.shapes = shape_list(c, cw);
    spec.variants = field<std::vector<std::string>>(c, "variants", cw, {});
    spec.params = field<std::map<std::string, double>>(c, "params", cw, {});
    s.cases.push_back(std::move(spec));
  }
  return s;
}

}  // namespace kbench
