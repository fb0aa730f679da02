#include "record/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "core/errors.hpp"
#include "core/shape.hpp"
// The statistics the harness computed the records with: verify holds them to the same code.
#include "core/stats.hpp"
#include "record/history_trace.hpp"
#include "record/manifest.hpp"
#include "record/result.hpp"
#include "record/sha256.hpp"
#include "record/verify_docs.hpp"

namespace kbench {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kRestore = "restore the file as it was written, or re-measure";
const char* kRemeasure = "re-measure with a current kbench";

// Regular files under `dir` with `extension` (any, when empty), less hidden ones, sorted.
std::vector<fs::path> files_under(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && !is_ignored_source_path(it->path().lexically_relative(dir)) &&
        (extension.empty() || it->path().extension() == extension))
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

bool is_safe_relative(const std::string& path) {
  fs::path p(path);
  if (path.empty() || p.is_absolute() || path.find('\n') != std::string::npos) return false;
  return std::none_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
}

std::string record_label(const Record& r, std::size_t index) {
  return "record " + std::to_string(index) + " (" + r.op + "/" + r.variant + " " + r.dtype + " " +
         shape_string(r.shape) + " " + r.cache + " " + r.timer + ")";
}

std::string exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The JSON holds every double exactly; another tool computing the same type-7 quantiles in
// another order of operations may differ in the last bits, never more.
constexpr double kStatisticsTolerance = 1e-12;

bool same_statistic(double recorded, double computed) {
  return std::fabs(recorded - computed) <=
         kStatisticsTolerance * std::max(std::fabs(recorded), std::fabs(computed));
}

// What is wrong with a record's median, quartiles and minimum as statistics of its samples.
std::vector<std::string> statistics_problems(const Record& r) {
  // An untimed record (checked only) has no samples to summarise: a sample or a statistic in
  // one is a time that nothing measured.
  if (!is_timed(r)) {
    if (r.samples_us.empty() && r.median_us == 0 && r.q1_us == 0 && r.q3_us == 0 && r.min_us == 0) return {};
    return {"is untimed (timer \"none\") but has samples_us or a nonzero median, quartile or minimum"};
  }
  if (r.samples_us.empty()) return {"has no samples_us"};
  if (!std::all_of(r.samples_us.begin(), r.samples_us.end(), [](double s) { return std::isfinite(s); }))
    return {"has a sample in samples_us that is not a finite number"};
  const Summary s = summarize(r.samples_us);
  std::vector<std::string> out;
  const std::pair<const char*, std::pair<double, double>> stats[] = {
      {"median_us", {r.median_us, s.median}},
      {"q1_us", {r.q1_us, s.q1}},
      {"q3_us", {r.q3_us, s.q3}},
      {"min_us", {r.min_us, s.min}}};
  for (const auto& [name, values] : stats)
    if (!same_statistic(values.first, values.second))
      out.push_back(std::string(name) + " is " + exact(values.first) + ", but its samples_us give " +
                    exact(values.second));
  return out;
}

class ResultCheck {
 public:
  ResultCheck(const fs::path& root, const HistoryTracer& history, VerifyReport& report,
              std::map<std::string, int>& untraced)
      : root_(root), history_(history), report_(report), untraced_(untraced) {}

  // Returns the result if it parses, for the archive layout and the docs check.
  std::optional<Result> check(const fs::path& file) const {
    ++report_.result_files;
    try {
      Result result = read_result(file);
      check_records(file, result);
      check_sources(file, result);
      return result;
    } catch (const UsageError& e) {
      std::string what = e.what();
      if (what.starts_with(file.string() + ": ")) what.erase(0, file.string().size() + 2);
      problem(file, "not a valid kbench/result/v1 file: " + what, "fix or delete it");
      return std::nullopt;
    }
  }

  void problem(const fs::path& file, std::string what, std::string fix) const {
    report_.problems.push_back({display_path(root_, file), std::move(what), std::move(fix)});
  }

 private:
  void check_records(const fs::path& file, const Result& result) const {
    if (!result.recorded_digest.empty() && result.recorded_digest != records_digest(result.records))
      problem(file,
              "its records do not match integrity.records (a raw sample, statistic or check was "
              "changed after the run)",
              kRestore);
    for (std::size_t i = 0; i < result.records.size(); ++i)
      for (const std::string& what : statistics_problems(result.records[i]))
        problem(file, record_label(result.records[i], i) + " " + what, kRestore);
  }

  // Each measured path with its recorded hash; a problem for whatever makes one unknowable.
  std::optional<std::map<std::string, std::string>> measured_hashes(const fs::path& file,
                                                                    const Result& result) const {
    const json& manifest = result.manifest;
    if (manifest.value("algorithm", "") != "sha256") {
      problem(file, "manifest.algorithm is not \"sha256\"", kRemeasure);
      return std::nullopt;
    }
    auto files = manifest.find("files");
    auto measured = manifest.find("measured");
    if (files == manifest.end() || !files->is_object() || measured == manifest.end() ||
        !measured->is_object()) {
      problem(file, "manifest lacks its \"files\" or \"measured\" object", kRemeasure);
      return std::nullopt;
    }
    std::set<std::string> paths;  // every op lists the harness: each file once
    for (const auto& [op, list] : measured->items()) {
      if (!list.is_array()) {
        problem(file, "manifest.measured." + op + " is not an array of paths", kRemeasure);
        continue;
      }
      for (const json& path : list) {
        if (path.is_string()) paths.insert(path.get<std::string>());
        else problem(file, "manifest.measured." + op + " holds a non-string path", kRemeasure);
      }
    }
    std::map<std::string, std::string> hashes;
    for (const std::string& path : paths) {
      auto recorded = files->find(path);
      if (!is_safe_relative(path))
        problem(file, "manifest lists '" + path + "', which is not a path inside the tree", "re-measure");
      else if (recorded == files->end() || !recorded->is_string())
        problem(file, "measured file " + path + " has no hash in manifest.files", "re-measure");
      else
        hashes[path] = recorded->get<std::string>();
    }
    std::set<std::string> unlisted;
    for (const Record& r : result.records)
      if (!measured->contains(r.op)) unlisted.insert(r.op);
    for (const std::string& op : unlisted)
      problem(file,
              "op '" + op + "' has records but no manifest.measured entry, so its sources are unknown",
              kRemeasure);
    return hashes;
  }

  bool hashes_in_current_tree(const std::map<std::string, std::string>& hashes) const {
    return std::all_of(hashes.begin(), hashes.end(), [&](const auto& entry) {
      std::error_code ec;
      if (!fs::is_regular_file(root_ / entry.first, ec)) return false;
      try {
        return hash_source_file(root_ / entry.first) == entry.second;
      } catch (const UsageError&) {
        return false;
      }
    });
  }

  // The current tree first; where it has moved on, the result's commit (plus diff) in git.
  void check_sources(const fs::path& file, const Result& result) const {
    const auto hashes = measured_hashes(file, result);
    if (!hashes || hashes_in_current_tree(*hashes)) return;
    const TraceVerdict verdict = history_.trace(result.meta.value("git", json()), *hashes);
    switch (verdict.kind) {
      case TraceVerdict::Kind::traced: ++report_.traced_through_history; break;
      case TraceVerdict::Kind::untraceable: ++untraced_[verdict.reason]; break;
      case TraceVerdict::Kind::problem:
        for (const auto& [what, fix] : verdict.problems) problem(file, what, fix);
        break;
    }
  }

  const fs::path& root_;
  const HistoryTracer& history_;
  VerifyReport& report_;
  std::map<std::string, int>& untraced_;
};

// archive/ holds superseded results as archive/<experiment>/<file>.json.gz (or .json, as
// written) and nothing else: sources are in git's history, notes and evidence in docs/records/.
void check_archive_place(const ResultCheck& check, const fs::path& archive, const fs::path& file,
                         const Result& result) {
  const fs::path relative = file.lexically_relative(archive);
  if (std::distance(relative.begin(), relative.end()) == 2 && *relative.begin() == result.experiment)
    return;
  check.problem(file, "an archived result belongs in archive/" + result.experiment + "/",
                "git mv it to archive/" + result.experiment + "/" + file.filename().string());
}

std::string untraced_note(const std::map<std::string, int>& untraced) {
  int count = 0;
  std::string why;
  for (const auto& [reason, n] : untraced) {
    count += n;
    why += (why.empty() ? "" : "; ") + reason;
  }
  return "verify: " + std::to_string(count) + " result" + (count == 1 ? "" : "s") +
         " cannot be traced through history: " + why +
         ". Their measured files differ from the current tree and were not checked; every other "
         "check ran";
}

}  // namespace

std::string display_path(const fs::path& root, const fs::path& p) {
  fs::path relative = p.lexically_relative(root);
  return relative.empty() || *relative.begin() == ".." ? p.string() : relative.generic_string();
}

VerifyReport verify_tree(const VerifyOptions& options) {
  const fs::path& root = options.root;
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw UsageError("verify: root " + root.string() + " is not a directory");
  VerifyReport report;
  std::map<std::string, int> untraced;  // reason -> results
  const HistoryTracer history(root);
  const ResultCheck check(root, history, report, untraced);
  SavedFigures current, archived;

  std::vector<fs::path> result_dirs = options.result_dirs;
  if (result_dirs.empty()) result_dirs.push_back(root / "results");
  for (const fs::path& dir : result_dirs)
    for (const fs::path& file : files_under(dir, ".json"))
      if (auto result = check.check(file)) current.add(*result, display_path(root, file));

  const fs::path archive = root / "archive";
  for (const fs::path& file : files_under(archive, "")) {
    if (file.extension() != ".json" && !is_compressed_result(file)) {
      check.problem(file, "archive/ holds only result JSON (.json or .json.gz)",
                    "move notes, probes and scratch data to docs/records/");
      continue;
    }
    if (auto result = check.check(file)) {
      check_archive_place(check, archive, file, *result);
      archived.add(*result, display_path(root, file));
    }
  }

  check_docs(root, current, archived, report);
  if (report.traced_through_history > 0)
    report.notes.push_back("verify: " + std::to_string(report.traced_through_history) +
                           " results traced through history (their sources changed since; git "
                           "holds the versions they measured)");
  if (!untraced.empty()) report.notes.push_back(untraced_note(untraced));
  return report;
}

std::string format_problem(const VerifyProblem& problem) {
  return problem.file + ": " + problem.what + "; " + problem.fix;
}

}  // namespace kbench
