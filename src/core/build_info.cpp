#include "core/build_info.hpp"

#include <cuda_runtime_api.h>

#include "core/text.hpp"

// Given by CMakeLists.txt to this file alone; compiled any other way, it says it does not know.
#ifndef KBENCH_VERSION
#define KBENCH_VERSION "unknown"
#endif
#ifndef KBENCH_CUDA_TOOLKIT_VERSION
#define KBENCH_CUDA_TOOLKIT_VERSION "unknown"
#endif
#ifndef KBENCH_CUDA_ARCHITECTURES
#define KBENCH_CUDA_ARCHITECTURES ""
#endif
#ifndef KBENCH_CUDA_ARCHITECTURES_FROM
#define KBENCH_CUDA_ARCHITECTURES_FROM "unknown"
#endif

namespace kbench {

const BuildInfo& build_info() {
  static const BuildInfo info = [] {
    BuildInfo b;
    b.version = KBENCH_VERSION;
    b.cuda_toolkit = KBENCH_CUDA_TOOLKIT_VERSION;
    // The headers' version is the runtime's: cudart is linked statically (CUDA::cudart_static).
    b.cuda_runtime = std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
    const std::string list = KBENCH_CUDA_ARCHITECTURES;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = list.find(',', start);
      const std::string item = trim(list.substr(start, comma - start));
      if (!item.empty()) b.architectures.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    b.architectures_from = KBENCH_CUDA_ARCHITECTURES_FROM;
    return b;
  }();
  return info;
}

std::string architectures_text(const std::vector<std::string>& architectures) {
  std::string out;
  for (const std::string& a : architectures) {
    if (!out.empty()) out += ", ";
    // "90a-real" is SASS alone and "90a-virtual" PTX alone; plain "90a" both. CMake's special
    // values (all, all-major) stay as they are.
    const std::size_t dash = a.find('-');
    const std::string number = a.substr(0, dash);
    const std::string kind = dash == std::string::npos ? "" : a.substr(dash + 1);
    if (number.empty() || number[0] < '0' || number[0] > '9') {
      out += a;
      continue;
    }
    out += (kind == "virtual" ? "compute_" : "sm_") + number;
    if (kind.empty()) out += " (+PTX)";
  }
  return out.empty() ? "none recorded" : out;
}

}  // namespace kbench
