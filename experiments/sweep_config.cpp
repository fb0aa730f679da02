#include "experiments/sweep_config.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "core/errors.hpp"
#include "core/json_schema.hpp"
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

// The format of sweep configs (compiled in: cmake/Schemas.cmake).
constexpr const char* kSweepSchema = "configs/schema/sweep.schema.json";

}  // namespace

std::vector<std::string> config_modes(const nlohmann::json& j, const char* key, const std::string& where,
                                      std::vector<std::string> fallback,
                                      std::vector<std::string> (*parse)(const std::string&)) {
  if (!j.contains(key)) return fallback;
  const auto& v = j.at(key);
  if (v.is_string()) return parse(v.get<std::string>());
  std::vector<std::string> out;
  for (const auto& m : v)
    for (const auto& one : parse(m.get<std::string>())) {
      // A mode named twice would be timed twice (["cold", "both"]); the schema sees two names.
      if (std::find(out.begin(), out.end(), one) != out.end())
        throw UsageError(where + ": '/" + key + "' names '" + one + "' twice");
      out.push_back(one);
    }
  return out;
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
  std::error_code ec;  // a name too long to look up is unreadable, not an internal error
  if (std::filesystem::is_directory(file, ec)) throw UsageError("config '" + file.string() + "' is a directory");
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
  // Every key, type and range is the schema's (configs/schema/sweep.schema.json); what follows
  // only converts, and checks what the schema cannot know.
  JsonSchema::embedded(kSweepSchema).validate(j, where);
  SweepSettings s;
  s.config_path = name;
  s.experiment = j.value("experiment", s.experiment);
  s.description = j.value("description", "");
  s.visits = j.value("visits", s.visits);
  s.samples = j.value("samples", s.samples);
  s.seed = j.value("seed", s.seed);
  s.caches = config_modes(j, "cache", where, s.caches, parse_cache_modes);
  s.timers = config_modes(j, "timer", where, s.timers, parse_timers);
  for (const auto& c : j.at("cases")) {
    CaseSpec spec;
    spec.op = c.at("op").get<std::string>();
    for (const auto& d : c.value("dtypes", std::vector<std::string>{"float32"})) spec.dtypes.push_back(parse_dtype(d));
    spec.shapes = c.at("shapes").get<std::vector<std::vector<std::int64_t>>>();
    spec.variants = c.value("variants", std::vector<std::string>{});
    spec.params = c.value("params", std::map<std::string, double>{});
    s.cases.push_back(std::move(spec));
  }
  return s;
}

}  // namespace kbench
