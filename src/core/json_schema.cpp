#include "core/json_schema.hpp"

// A schema valijson cannot read throws (a bug in a shipped file) instead of aborting.
#define VALIJSON_USE_EXCEPTIONS 1
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace kbench {
namespace {

using nlohmann::json;

// valijson names a failing value by a context: "<root>", then "[key]" or "[index]" per step.
std::vector<std::string> tokens_of(const std::vector<std::string>& context) {
  std::vector<std::string> tokens;
  for (const auto& step : context)
    if (step.size() >= 2 && step.front() == '[' && step.back() == ']') tokens.push_back(step.substr(1, step.size() - 2));
  return tokens;
}

// A JSON pointer as the user reads it: "/cases/0/shapes", each token escaped (~0, ~1) and
// made printable (a key may hold an escape sequence).
std::string pointer_text(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& token : tokens) {
    std::string escaped;
    for (char c : token) escaped += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    out += "/" + printable(escaped, 40);
  }
  return out;
}

// A value as the message shows it: JSON, ASCII only, cut short past 60 characters.
std::string shown(const json& v) {
  const std::string text = v.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  return text.size() <= 60 ? text : text.substr(0, 57) + "...";
}

// The JSON Schema type names a value has ("integer" values are "number"s too).
bool has_type(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

class SchemaWalk {
 public:
  explicit SchemaWalk(const json& root) : root_(root) {}

  // `node` with its local "$ref"s followed ("#/definitions/case").
  const json* resolve(const json* node) const {
    for (int hops = 0; node && node->is_object() && node->contains("$ref"); ++hops) {
      const auto& ref = (*node)["$ref"];
      if (hops > 16 || !ref.is_string() || ref.get<std::string>().rfind('#', 0) != 0) return nullptr;
      const json::json_pointer at(ref.get<std::string>().substr(1));
      node = root_.contains(at) ? &root_.at(at) : nullptr;
    }
    return node && node->is_object() ? node : nullptr;
  }

  // Of an anyOf or oneOf, the first branch that takes `value`'s type (the one whose own
  // keywords describe it further); `node` itself otherwise.
  const json* branch(const json* node, const json& value) const {
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!node->contains(key) || !(*node)[key].is_array()) continue;
      for (const auto& member : (*node)[key]) {
        const json* m = resolve(&member);
        if (m && m->contains("type") && (*m)["type"].is_string() && has_type(value, (*m)["type"].get<std::string>()))
          return m;
      }
    }
    return node;
  }

  // The schema of `value`'s member `token`, or null where the schema does not describe it.
  const json* child(const json* node, const json& value, const std::string& token) const {
    node = branch(node, value);
    if (value.is_object()) {
      if (node->contains("properties") && (*node)["properties"].contains(token)) return resolve(&(*node)["properties"][token]);
      if (node->contains("additionalProperties")) return resolve(&(*node)["additionalProperties"]);
      return nullptr;
    }
    if (value.is_array() && node->contains("items")) return resolve(&(*node)["items"]);
    return nullptr;
  }

  static std::string description(const json* node) {
    return node && node->contains("description") && (*node)["description"].is_string()
               ? (*node)["description"].get<std::string>()
               : "";
  }

 private:
  const json& root_;
};

// One line on the first problem valijson found: at `tokens`, with valijson's own words as the
// last resort when the schema does not describe the place.
std::string problem_line(const json& schema, const json& doc, const std::vector<std::string>& tokens,
                         const std::string& fallback) {
  const SchemaWalk walk(schema);
  const json* node = walk.resolve(&schema);
  const json* value = &doc;
  for (const auto& token : tokens) {
    const json* next = nullptr;
    if (value->is_object() && value->contains(token)) next = &(*value)[token];
    if (value->is_array() && !token.empty() && token.find_first_not_of("0123456789") == std::string::npos &&
        std::stoull(token) < value->size())
      next = &(*value)[std::stoull(token)];
    if (!next) return "'" + pointer_text(tokens) + "': " + fallback;
    node = node ? walk.child(node, *value, token) : nullptr;
    value = next;
  }
  const std::string at = pointer_text(tokens);
  if (!node) return "'" + at + "': " + fallback;
  const json* own = walk.branch(node, *value);
  if (value->is_object() && own->value("additionalProperties", json(true)) == json(false)) {
    const json properties = own->value("properties", json::object());
    for (const auto& [key, member] : value->items())
      if (!properties.contains(key)) {
        std::string known;
        for (const auto& [name, spec] : properties.items()) known += (known.empty() ? "" : ", ") + name;
        return "unknown key '" + pointer_text(tokens) + pointer_text({key}) + "' (expected one of " + known + ")";
      }
  }
  if (value->is_object() && own->contains("required") && (*own)["required"].is_array())
    for (const auto& key : (*own)["required"])
      if (key.is_string() && !value->contains(key.get<std::string>())) {
        const std::string name = key.get<std::string>();
        const std::string what = SchemaWalk::description(walk.child(own, *value, name));
        return "'" + at + pointer_text({name}) + "' is missing" + (what.empty() ? "" : " (" + what + ")");
      }
  std::string what = SchemaWalk::description(node);
  if (what.empty()) what = SchemaWalk::description(own);
  if (what.empty()) return "'" + at + "': " + fallback;
  return (at.empty() ? "" : "'" + at + "' ") + "must be " + what + ", got " + shown(*value);
}

}  // namespace

JsonSchema::JsonSchema(std::string_view text, std::string name) : name_(std::move(name)) {
  try {
    json_ = json::parse(text);
    schema_ = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    const valijson::adapters::NlohmannJsonAdapter adapter(json_);
    parser.populateSchema(adapter, *schema_);
  } catch (const std::exception& e) {
    throw std::logic_error("schema " + name_ + " cannot be read: " + e.what());
  }
}

JsonSchema::~JsonSchema() = default;

const JsonSchema& JsonSchema::embedded(std::string_view path) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<JsonSchema>, std::less<>> schemas;
  const std::lock_guard lock(mutex);
  auto it = schemas.find(path);
  if (it == schemas.end()) {
    const std::string_view text = embedded_schema(path);
    if (text.empty()) throw std::logic_error("no schema " + std::string(path) + " is compiled in (cmake/Schemas.cmake)");
    it = schemas.emplace(std::string(path), std::make_unique<JsonSchema>(text, std::string(path))).first;
  }
  return *it->second;
}

void JsonSchema::validate(const json& doc, const std::string& where) const {
  valijson::Validator validator;  // strict types: 2.0 is not an integer, "2" not a number
  valijson::ValidationResults results;
  const valijson::adapters::NlohmannJsonAdapter adapter(doc);
  if (validator.validate(*schema_, adapter, &results)) return;
  valijson::ValidationResults::Error first;
  results.popError(first);  // valijson reports a value's own fault before its parents' summaries
  const std::string line = problem_line(json_, doc, tokens_of(first.context), first.description);
  throw UsageError(where + (line.rfind("must be", 0) == 0 ? " " : ": ") + line);
}

}  // namespace kbench
