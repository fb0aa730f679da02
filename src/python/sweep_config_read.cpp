#include "python/sweep_config_read.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/errors.hpp"
#include "core/json_schema.hpp"

namespace kbench::python {

namespace {

// A cache mode or timer name, expanded as kbench run expands it (the schema has checked it).
std::vector<std::string> expand(const std::string& key, const std::string& name) {
  if (name == "both") return key == "cache" ? std::vector<std::string>{"cold", "warm"} : std::vector<std::string>{"events", "graph"};
  if (name == "all") return {"events", "graph", "cupti"};
  return {name};
}

// j[key]: one name or a list of them; a mode named twice (["cold", "both"]) would be timed twice.
std::vector<std::string> modes(const nlohmann::json& j, const std::string& key, const std::string& where,
                               const std::string& fallback) {
  if (!j.contains(key)) return {fallback};
  const nlohmann::json& v = j.at(key);
  if (v.is_string()) return expand(key, v.get<std::string>());
  std::vector<std::string> out;
  for (const auto& m : v)
    for (const auto& one : expand(key, m.get<std::string>())) {
      for (const auto& seen : out)
        if (seen == one) throw UsageError(where + ": '/" + key + "' names '" + one + "' twice");
      out.push_back(one);
    }
  return out;
}

}  // namespace

nlohmann::json read_sweep_config(const std::string& path) {
  std::error_code ec;  // a name too long to look up is unreadable, not an internal error
  if (std::filesystem::is_directory(path, ec)) throw UsageError("config '" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read config '" + path + "'");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError("config '" + path + "' is not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception&) {  // a number past double's range
    throw UsageError("config '" + path + "' holds a number too large to read");
  }
  const std::string where = "config '" + path + "'";
  JsonSchema::embedded("configs/schema/sweep.schema.json").validate(j, where);
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : j.at("cases"))
    cases.push_back({{"op", c.at("op")},
                     {"dtypes", c.value("dtypes", nlohmann::json::array({"float32"}))},
                     {"shapes", c.at("shapes")},
                     {"variants", c.value("variants", nlohmann::json::array())},
                     {"params", c.value("params", nlohmann::json::object())}});
  return {{"experiment", j.value("experiment", "sweep")}, {"description", j.value("description", "")},
          {"cache", modes(j, "cache", where, "cold")},     {"timer", modes(j, "timer", where, "events")},
          {"visits", j.value("visits", 3)},                {"samples", j.value("samples", 3)},
          {"seed", j.value("seed", 1)},                    {"cases", cases}};
}

}  // namespace kbench::python
