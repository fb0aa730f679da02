#include "record/history_trace.hpp"

#include "record/sha256.hpp"

namespace kbench {
namespace {

using Kind = TraceVerdict::Kind;

TraceVerdict problem(std::string what, std::string fix) {
  TraceVerdict v;
  v.kind = Kind::problem;
  v.problems.emplace_back(std::move(what), std::move(fix));
  return v;
}

TraceVerdict untraceable(std::string reason) {
  TraceVerdict v;
  v.kind = Kind::untraceable;
  v.reason = std::move(reason);
  return v;
}

std::string text_field(const nlohmann::json& git, const char* key) {
  const auto it = git.find(key);
  return it != git.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool flag(const nlohmann::json& git, const char* key) {
  const auto it = git.find(key);
  return it != git.end() && it->is_boolean() && it->get<bool>();
}

const char* kRemeasure = "re-measure: this repository does not hold the version it measured";

}  // namespace

HistoryTracer::HistoryTracer(const std::filesystem::path& root)
    : repo_(root), checkout_(repo_.is_checkout()), shallow_(checkout_ && repo_.is_shallow()) {}

TraceVerdict HistoryTracer::trace(const nlohmann::json& git,
                                  const std::map<std::string, std::string>& recorded) const {
  if (!git.is_object()) return problem("it has no meta.git object", "re-measure");
  const std::string commit = text_field(git, "commit");
  if (commit.empty() || commit == "unknown")
    return problem("its measured files differ from the current tree and it records no commit "
                   "(meta.git.commit) to trace them through",
                   "re-measure");
  if (!checkout_) return untraceable("this tree is not a git checkout");
  const auto full = repo_.resolve_commit(commit);
  if (!full) {
    if (shallow_)
      return untraceable("this shallow clone lacks their commits; git fetch --unshallow gets them");
    return problem("its measured files differ from the current tree, and its commit " + commit +
                       " is not in this repository's history",
                   "fetch that commit, or re-measure");
  }
  std::vector<std::string> paths;
  for (const auto& [path, hex] : recorded) paths.push_back(path);
  const auto at_commit = repo_.read_files(*full, paths);
  if (!at_commit) return problem("git cannot read the files of commit " + commit, "check the repository");

  const std::string diff = text_field(git, "diff");
  const bool dirty = flag(git, "dirty");
  std::map<std::string, std::string> files = *at_commit;
  std::string where = "at commit " + commit.substr(0, 12);
  if (!diff.empty()) {
    if (text_field(git, "diff_sha256") != sha256_hex(diff))
      return problem("meta.git.diff does not hash as meta.git.diff_sha256 (edited or cut)",
                     "restore the file as it was written, or re-measure");
    RebuiltFiles rebuilt = apply_diff(*at_commit, diff, paths);
    if (!rebuilt.error.empty())
      return problem("its meta.git.diff does not apply to commit " + commit + ": " + rebuilt.error,
                     kRemeasure);
    files = std::move(rebuilt.files);
    where += " with its recorded diff";
  }

  std::vector<std::string> differing;
  for (const auto& [path, hex] : recorded) {
    const auto it = files.find(path);
    if (it == files.end() || sha256_hex(normalize_line_endings(it->second)) != hex)
      differing.push_back(path);
  }
  if (differing.empty()) return {};
  // A dirty tree's changes may lie outside the measured files (then the commit alone matched
  // above); where they touch them, only the diff could say what ran.
  if (dirty && diff.empty())
    return problem("measured on a dirty tree at " + commit.substr(0, 12) +
                       " and it records no diff, so its sources cannot be rebuilt (" +
                       std::to_string(differing.size()) + " measured files differ there, first " +
                       differing.front() + ")",
                   kRemeasure);
  TraceVerdict v;
  v.kind = Kind::problem;
  for (const std::string& path : differing)
    v.problems.emplace_back("measured file " + path +
                                (files.count(path) ? " does not hash as recorded" : " is missing") +
                                ", neither in the current tree nor " + where,
                            kRemeasure);
  return v;
}

}  // namespace kbench
