// JSON Schema checks of untrusted input (configs, result files) through valijson, with one line
// for the user that names the first problem by its JSON pointer:
//   config 'a.json': unknown key '/cases/0/dtype' (expected one of dtypes, op, params, shapes, variants)
//   config 'a.json': '/visits' must be a whole number from 1 to 100000, got 2.7
//   results/x.json: '/records/3/median_us' is missing (the median of samples_us, in us, or null)
// The wording comes from the schema: each property's "description" says what it must be, so a
// schema is written with descriptions that complete "must be ..." (a CPU test holds every
// shipped schema to that). What a schema cannot say (an op's name against the registry, a mode
// named twice through "both") stays with the reader that knows it.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace valijson {
class Schema;
}

namespace kbench {

// The text of a schema compiled into the binary (cmake/Schemas.cmake), by its path from the
// source root ("configs/schema/sweep.schema.json"); empty when there is none by that name.
std::string_view embedded_schema(std::string_view path);

class JsonSchema {
 public:
  // `text` is the schema; `name` names it in the std::logic_error thrown when it is not a
  // schema valijson can read (a bug in the shipped file, not bad input).
  JsonSchema(std::string_view text, std::string name);
  ~JsonSchema();
  JsonSchema(const JsonSchema&) = delete;
  JsonSchema& operator=(const JsonSchema&) = delete;

  // One of the schemas compiled in, read once (std::logic_error when there is none by that name).
  static const JsonSchema& embedded(std::string_view path);

  // UsageError "<where>: <first problem>" (one line) when `doc` does not conform.
  void validate(const nlohmann::json& doc, const std::string& where) const;

  const nlohmann::json& document() const { return json_; }

 private:
  std::string name_;
  nlohmann::json json_;
  std::unique_ptr<valijson::Schema> schema_;
};

}  // namespace kbench
