// libFuzzer target: a result file's text through the reader every command that reads results
// uses (result_from_json after the JSON parse). Bad files must be refused as UsageError (or a
// JSON parse error, which read_result turns into one), never crash or throw anything else.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>

#include "core/errors.hpp"
#include "record/result.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(data, data + size);
  } catch (const nlohmann::json::exception&) {  // read_result turns these into a UsageError
    return 0;
  }
  try {
    (void)kbench::result_from_json(j);
  } catch (const kbench::UsageError&) {
  }
  return 0;
}
