// `kbench --version`: what this binary is (version, CUDA, architectures, the digest of its
// sources) and which commit those sources are, judged as provenance judges a run's.
#pragma once

#include <string>

namespace kbench {

// The text --version prints, lines ending in '\n' except the last (CLI11 adds it).
std::string version_text();

}  // namespace kbench
