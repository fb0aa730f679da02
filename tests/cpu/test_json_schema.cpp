// The JSON Schema checks (src/core/json_schema.hpp): the one line each kind of problem gets, and
// the shipped schemas themselves: readable, worded for those lines, and holding the limits the
// C++ holds.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/json_schema.hpp"
#include "core/shape.hpp"
#include "experiments/grid_config.hpp"
#include "experiments/sweep_config.hpp"
#include "kernels/rows/row_plan.hpp"

namespace kbench {
namespace {

using nlohmann::json;

const char* const kSchemas[] = {"configs/schema/sweep.schema.json", "configs/schema/grid.schema.json",
                                "src/record/result.schema.json", "src/record/list.schema.json",
                                "src/record/plan.schema.json"};

// A small schema with each construct the messages handle.
const JsonSchema& toy() {
  static const JsonSchema schema(R"({
    "description": "a toy: an object", "type": "object", "additionalProperties": false, "required": ["n"],
    "properties": {
      "n": {"description": "a whole number from 1 to 9", "type": "integer", "minimum": 1, "maximum": 9},
      "mode": {"description": "a or b, or a list of them",
               "anyOf": [{"$ref": "#/definitions/mode"}, {"type": "array", "items": {"$ref": "#/definitions/mode"}}]},
      "list": {"description": "a list of parts", "type": "array", "items": {"$ref": "#/definitions/part"}},
      "free": {"description": "an object of numbers", "type": "object", "additionalProperties": {"description": "a number", "type": "number"}}
    },
    "definitions": {
      "mode": {"description": "a or b", "enum": ["a", "b"]},
      "part": {"description": "a part", "type": "object", "additionalProperties": false, "required": ["id"],
               "properties": {"id": {"description": "a string", "type": "string"}}}
    }})",
                                 "toy");
  return schema;
}

std::string problem(const std::string& doc) {
  try {
    toy().validate(json::parse(doc), "toy.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonSchema, OneLineNamesTheKeyByItsPointer) {
  EXPECT_EQ(problem(R"({"n": 3, "mode": ["a", "b"], "list": [{"id": "x"}], "free": {"k": 1.5}})"), "");
  EXPECT_EQ(problem(R"({"n": 0})"), "toy.json: '/n' must be a whole number from 1 to 9, got 0");
  EXPECT_EQ(problem(R"({"n": 2.0})"), "toy.json: '/n' must be a whole number from 1 to 9, got 2.0");  // strict
  EXPECT_EQ(problem(R"({"n": "3"})"), "toy.json: '/n' must be a whole number from 1 to 9, got \"3\"");
  EXPECT_EQ(problem(R"({"n": 1, "nn": 2})"), "toy.json: unknown key '/nn' (expected one of free, list, mode, n)");
  EXPECT_EQ(problem(R"({})"), "toy.json: '/n' is missing (a whole number from 1 to 9)");
  EXPECT_EQ(problem(R"([])"), "toy.json must be a toy: an object, got []");
  EXPECT_EQ(problem(R"({"n": 1, "mode": "c"})"), "toy.json: '/mode' must be a or b, or a list of them, got \"c\"");
  EXPECT_EQ(problem(R"({"n": 1, "list": [{"id": "x"}, {}]})"), "toy.json: '/list/1/id' is missing (a string)");
  EXPECT_EQ(problem(R"({"n": 1, "list": [{"id": 1}]})"), "toy.json: '/list/0/id' must be a string, got 1");
  EXPECT_EQ(problem(R"({"n": 1, "list": [{"id": "x", "a/b~": 1}]})"),
            "toy.json: unknown key '/list/0/a~1b~0' (expected one of id)");
  EXPECT_EQ(problem(R"({"n": 1, "free": {"k": null}})"), "toy.json: '/free/k' must be a number, got null");
}

// What the line echoes is printable and short: an escape sequence in a key, 100 kB in a value.
TEST(JsonSchema, EchoedInputIsPrintableAndShort) {
  EXPECT_EQ(problem("{\"n\": 1, \"\\u001b[31mred\": 1}"),
            "toy.json: unknown key '/\\x1b[31mred' (expected one of free, list, mode, n)");
  const std::string big(100000, 'x');
  const std::string line = problem(R"({"n": ")" + big + R"("})");
  EXPECT_EQ(line, "toy.json: '/n' must be a whole number from 1 to 9, got \"" + std::string(56, 'x') + "...");
  EXPECT_EQ(problem(R"({"n": "\u001b[2J"})"), "toy.json: '/n' must be a whole number from 1 to 9, got \"\\u001b[2J\"");
}

// Every schema compiled in reads, and says in each place what a value must be: the properties,
// items and definitions of each all carry a "description" (the message's words).
TEST(JsonSchema, ShippedSchemasDescribeEveryPlace) {
  int described = 0;
  for (const char* path : kSchemas) {
    const json& schema = JsonSchema::embedded(path).document();
    std::function<void(const json&, const std::string&)> walk = [&](const json& node, const std::string& at) {
      if (!node.is_object()) return;
      if (!node.contains("$ref")) {
        EXPECT_TRUE(node.contains("description")) << path << " " << at << " says nothing of what it must be";
        ++described;
      }
      for (const char* key : {"properties", "definitions"})
        if (node.contains(key))
          for (const auto& [name, member] : node[key].items()) walk(member, at + "/" + key + "/" + name);
      for (const char* key : {"items", "additionalProperties"})
        if (node.contains(key)) walk(node[key], at + "/" + key);
    };
    walk(schema, "#");
  }
  EXPECT_GE(described, 70);  // the walk reached them all (77 places when written)
}

// The limits written in the schemas are the ones the C++ holds (the command line's flags and the
// readers take them from there).
TEST(JsonSchema, ConfigLimitsAreTheCodes) {
  const json& sweep = JsonSchema::embedded("configs/schema/sweep.schema.json").document();
  const json& grid = JsonSchema::embedded("configs/schema/grid.schema.json").document();
  EXPECT_EQ(sweep["definitions"]["count"]["maximum"], kMaxVisitsOrSamples);
  EXPECT_EQ(sweep["definitions"]["shape"]["items"]["maximum"], kMaxDim);
  EXPECT_EQ(sweep["properties"]["seed"]["maximum"], kMaxSeed);
  EXPECT_EQ(grid["properties"]["seed"]["maximum"], kMaxSeed);
  EXPECT_EQ(grid["properties"]["rows"]["items"]["maximum"], kMaxDim);
  EXPECT_EQ(grid["properties"]["widths"]["items"]["maximum"], rows::kMaxWidth);
  EXPECT_EQ(grid["properties"]["rows_per_sm"]["items"]["maximum"], kMaxRowsPerSm);
  // What the two config formats share by name, they share exactly.
  int shared = 0;
  for (const auto& [name, definition] : grid["definitions"].items()) {
    ASSERT_TRUE(sweep["definitions"].contains(name)) << name;
    EXPECT_EQ(definition, sweep["definitions"][name]) << name;
    ++shared;
  }
  for (const char* key : {"description", "cache", "timer", "visits", "samples", "seed"}) {
    EXPECT_EQ(grid["properties"][key], sweep["properties"][key]) << key;
    ++shared;
  }
  EXPECT_EQ(shared, 11);
}

TEST(JsonSchema, AnUnknownSchemaIsABugNotBadInput) {
  EXPECT_THROW(JsonSchema::embedded("configs/schema/nosuch.schema.json"), std::logic_error);
  EXPECT_THROW(JsonSchema("{not json", "broken"), std::logic_error);
}

}  // namespace
}  // namespace kbench
