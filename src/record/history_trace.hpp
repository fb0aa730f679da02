// Tracing a result's measured files through history, for `kbench verify`, when they no longer
// hash as recorded in the current tree: rebuilt at the result's meta.git.commit (plus its
// meta.git.diff when it was measured on a dirty tree) from the repository's history.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "record/git_history.hpp"

namespace kbench {

struct TraceVerdict {
  enum class Kind {
    traced,       // every measured file hashes as recorded at its commit (plus diff)
    problem,      // history is here, and does not hold what the result measured
    untraceable,  // no history to ask (not a git checkout, or a shallow clone without the commit)
  };
  Kind kind = Kind::traced;
  std::vector<std::pair<std::string, std::string>> problems;  // (what, fix)
  std::string reason;                                          // untraceable: why
};

class HistoryTracer {
 public:
  explicit HistoryTracer(const std::filesystem::path& root);

  // `git` is the result's meta.git; `recorded` maps each measured path to its recorded
  // SHA-256 (of the LF-normalised content).
  TraceVerdict trace(const nlohmann::json& git,
                     const std::map<std::string, std::string>& recorded) const;

 private:
  GitRepo repo_;
  bool checkout_;
  bool shallow_;
};

}  // namespace kbench
