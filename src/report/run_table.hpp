// The table `kbench run` prints when it ends, in the format --format asks: md (a table per op,
// its columns as wide as their widest cell, numbers aligned right), csv or json (the records
// as `kbench report --format csv|json` gives them, report/csv.hpp). A pure function of the
// result, so the CPU tests read it without a GPU.
#pragma once

#include <string>

#include "record/result.hpp"

namespace kbench {

// `written`: the result file, named in the csv and json rows' "file".
std::string run_table(const Result& r, const std::string& format, const std::string& written);

}  // namespace kbench
