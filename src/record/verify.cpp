#include "record/verify.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <regex>
#include <set>

#include "core/errors.hpp"
#include "core/shape.hpp"
#include "record/result.hpp"
#include "record/sha256.hpp"

namespace kbench {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Shown relative to the root, so messages can be pasted into a shell at the root.
std::string display(const fs::path& root, const fs::path& p) {
  fs::path relative = p.lexically_relative(root);
  return relative.empty() || *relative.begin() == ".." ? p.string() : relative.generic_string();
}

std::vector<fs::path> files_under(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == extension) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

bool is_safe_relative(const std::string& path) {
  fs::path p(path);
  if (path.empty() || p.is_absolute()) return false;
  return std::none_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
}

// A result and where its sources live: the root for current results, archive/<entry>/ for
// archived ones.
struct ResultCheck {
  const fs::path& root;
  const fs::path& sources;
  bool archived;
  VerifyReport& report;

  void problem(const fs::path& file, std::string what, std::string fix) const {
    report.problems.push_back({display(root, file), std::move(what), std::move(fix)});
  }

  std::string source_fix(const fs::path& file, const std::string& path) const {
    if (archived)
      return "restore " + display(root, sources / path) + " to the version this result measured";
    return "re-measure, or move the result beside its sources with `scripts/archive_result.sh " +
           display(root, file) + "`";
  }

  void check_manifest(const fs::path& file, const Result& result) const {
    const json& manifest = result.manifest;
    const auto remeasure = "re-measure with a current kbench";
    if (manifest.value("algorithm", "") != "sha256") {
      problem(file, "manifest.algorithm is not \"sha256\"", remeasure);
      return;
    }
    auto files = manifest.find("files");
    auto measured = manifest.find("measured");
    if (files == manifest.end() || !files->is_object() || measured == manifest.end() ||
        !measured->is_object()) {
      problem(file, "manifest lacks its \"files\" or \"measured\" object", remeasure);
      return;
    }
    std::set<std::string> paths;  // every op lists the harness: check each file once
    for (const auto& [op, list] : measured->items()) {
      if (!list.is_array()) {
        problem(file, "manifest.measured." + op + " is not an array of paths", remeasure);
        continue;
      }
      for (const json& path : list) {
        if (path.is_string())
          paths.insert(path.get<std::string>());
        else
          problem(file, "manifest.measured." + op + " holds a non-string path", remeasure);
      }
    }
    for (const std::string& path : paths) check_source(file, *files, path);
    std::set<std::string> unlisted;
    for (const Record& r : result.records)
      if (!measured->contains(r.op)) unlisted.insert(r.op);
    for (const std::string& op : unlisted)
      problem(
          file,
          "op '" + op + "' has records but no manifest.measured entry, so its sources are unknown",
          remeasure);
  }

  void check_source(const fs::path& file, const json& files, const std::string& path) const {
    if (!is_safe_relative(path)) {
      problem(file, "manifest lists '" + path + "', which is not a path inside the tree",
              "re-measure");
      return;
    }
    auto recorded = files.find(path);
    if (recorded == files.end() || !recorded->is_string()) {
      problem(file, "measured file " + path + " has no hash in manifest.files", "re-measure");
      return;
    }
    const fs::path on_disk = sources / path;
    std::error_code ec;
    if (!fs::is_regular_file(on_disk, ec)) {
      problem(file, "measured file " + display(root, on_disk) + " is missing",
              source_fix(file, path));
      return;
    }
    try {
      if (hash_source_file(on_disk) != recorded->get<std::string>())
        problem(
            file,
            "measured file " + display(root, on_disk) + " changed since this run (sha256 differs)",
            source_fix(file, path));
    } catch (const UsageError& e) {
      problem(file, e.what(), source_fix(file, path));
    }
  }

  // Returns the result if it parses, for the docs check.
  std::optional<Result> check_file(const fs::path& file) const {
    ++report.result_files;
    try {
      Result result = read_result(file);
      check_manifest(file, result);
      return result;
    } catch (const UsageError& e) {
      std::string what = e.what();
      if (what.starts_with(file.string() + ": ")) what.erase(0, file.string().size() + 2);
      problem(file, "not a valid kbench/result/v1 file: " + what, "fix or delete it");
      return std::nullopt;
    }
  }
};

// --- docs -----------------------------------------------------------------------------------

// What a saved figure is a figure of. A docs line that names ops, dtypes, shapes, timers or
// caches only matches figures that agree with it, so a number cannot pass by equalling some
// unrelated record's median. A timer floor has no op, dtype or shape, and agrees with any.
struct Figure {
  double value;
  std::string op, dtype, shape, cache, timer;
};

// The figures verify can trace: medians for times (records, and the sweep's timer floors in
// extra.timer_floor, extra.timer_floor_before and extra.timer_floor_start), gbps for bandwidths.
struct SavedFigures {
  std::vector<Figure> median_us;
  std::vector<Figure> gbps;

  void add(const Result& result) {
    for (const Record& r : result.records) {
      const std::string shape = shape_string(r.shape);
      if (std::isfinite(r.median_us))
        median_us.push_back({r.median_us, r.op, r.dtype, shape, r.cache, r.timer});
      if (std::isfinite(r.gbps)) gbps.push_back({r.gbps, r.op, r.dtype, shape, r.cache, r.timer});
    }
    for (const char* key : {"timer_floor", "timer_floor_before", "timer_floor_start"}) {
      const auto floors = result.extra.find(key);
      if (floors == result.extra.end() || !floors->is_array()) continue;
      for (const auto& f : *floors)
        if (f.is_object() && f.contains("median_us") && f["median_us"].is_number())
          median_us.push_back({f["median_us"].get<double>(), "", "", "",
                               f.value("cache", std::string{}), f.value("timer", std::string{})});
    }
  }
  void add_ops_to(std::set<std::string>& ops) const {
    for (const Figure& f : median_us)
      if (!f.op.empty()) ops.insert(f.op);
  }
};

// What one docs line names: each set empty when the line names none of its kind.
struct LineContext {
  std::set<std::string> op, dtype, shape, cache, timer;

  static bool agrees(const std::set<std::string>& named, const std::string& value) {
    return named.empty() || value.empty() || named.count(value) > 0;
  }
  bool agrees(const Figure& f) const {
    return agrees(op, f.op) && agrees(dtype, f.dtype) && agrees(shape, f.shape) &&
           agrees(cache, f.cache) && agrees(timer, f.timer);
  }
  std::string describe() const {
    std::string text;
    const auto add = [&](const char* kind, const std::set<std::string>& values) {
      for (const std::string& v : values) {
        if (!text.empty()) text += ", ";
        text.append(kind).append(" ").append(v);
      }
    };
    add("op", op);
    add("dtype", dtype);
    add("shape", shape);
    add("cache", cache);
    add("timer", timer);
    return text;
  }
};

// Words are runs of letters, digits and '_' (row_sum and softmax_backward are one word each,
// "row sum" is two and names no op). A shape is RxC... or a bare integer of 6 or more digits
// (a 1-D element count such as 268435456).
LineContext line_context(const std::string& line, const std::set<std::string>& ops) {
  static const std::regex word("[A-Za-z0-9_]+");
  static const std::regex shape("^(?:[0-9]+(?:x[0-9]+)+|[0-9]{6,})$");
  LineContext context;
  for (std::sregex_iterator it(line.begin(), line.end(), word), end; it != end; ++it) {
    const std::string w = it->str();
    const std::size_t at = static_cast<std::size_t>(it->position());
    const bool in_number = (at > 0 && (line[at - 1] == '.' || line[at - 1] == ',')) ||
                           (at + w.size() < line.size() &&
                            (line[at + w.size()] == '.' || line[at + w.size()] == ','));
    if (ops.count(w)) context.op.insert(w);
    else if (w == "float32" || w == "float16" || w == "bfloat16") context.dtype.insert(w);
    else if (w == "cold" || w == "warm") context.cache.insert(w);
    else if (w == "events" || w == "graph") context.timer.insert(w);
    else if (!in_number && std::regex_match(w, shape)) context.shape.insert(w);
  }
  return context;
}

// "<number> us|µs|GB/s|TB/s" with an optional (possibly non-breaking) space; the number may
// group thousands with commas. It must not be the tail of a longer token (v1.5, x86, 2e3).
const std::regex& figure_pattern() {
  static const std::regex pattern(
      "(^|[^0-9A-Za-z._])((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\\.([0-9]+))?)"
      "(?: |\xC2\xA0|\xE2\x80\xAF)?(us|\xC2\xB5s|\xCE\xBCs|GB/s|TB/s)(?![A-Za-z0-9])");
  return pattern;
}

const std::regex& archive_link_pattern() {
  static const std::regex pattern("\\]\\(<?[^)]*archive/");
  return pattern;
}

// |saved - quoted| within half a unit of the last quoted digit: "4.3 us" matches 4.26 and
// 4.349 but not 4.36. A tiny relative slack absorbs binary rounding of the decimal bounds.
// Only figures that agree with what the line names count.
bool matches_at_precision(double quoted, int decimals, const std::vector<Figure>& saved,
                          double scale, const LineContext& context) {
  const double half_unit = 0.5 * std::pow(10.0, -decimals);
  return std::any_of(saved.begin(), saved.end(), [&](const Figure& f) {
    return std::fabs(f.value / scale - quoted) <= half_unit * (1 + 1e-9) && context.agrees(f);
  });
}

bool is_fence(const std::string& line, std::string& fence) {
  std::size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos || start > 3) return false;
  char c = line[start];
  if (c != '`' && c != '~') return false;
  std::size_t end = line.find_first_not_of(c, start);
  std::size_t length = (end == std::string::npos ? line.size() : end) - start;
  if (length < 3) return false;
  if (fence.empty()) {
    fence.assign(length, c);
    return true;
  }
  if (c == fence[0] && length >= fence.size()) {  // closes only with the same kind, as long
    fence.clear();
    return true;
  }
  return false;
}

void check_doc(const fs::path& root, const fs::path& doc, const SavedFigures& current,
               const SavedFigures& archived, const std::set<std::string>& ops,
               VerifyReport& report) {
  std::ifstream in(doc, std::ios::binary);
  if (!in) {
    report.problems.push_back({display(root, doc), "cannot be read", "check its permissions"});
    return;
  }
  std::string fence;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (is_fence(line, fence) || !fence.empty()) continue;
    if (line.find("verify:ignore") != std::string::npos) continue;
    const bool links_archive = std::regex_search(line, archive_link_pattern());
    const LineContext context = line_context(line, ops);
    for (std::sregex_iterator it(line.begin(), line.end(), figure_pattern()), end; it != end;
         ++it) {
      const std::smatch& m = *it;
      std::string digits = m[2].str();
      digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
      const double quoted = std::stod(digits);
      const int decimals = static_cast<int>(m[3].length());
      const std::string unit = m[4].str();
      const bool is_time = unit != "GB/s" && unit != "TB/s";
      const double scale = unit == "TB/s" ? 1000.0 : 1.0;
      auto saved_in = [&](const SavedFigures& f) {
        return matches_at_precision(quoted, decimals, is_time ? f.median_us : f.gbps, scale,
                                    context);
      };
      if (saved_in(current) || (links_archive && saved_in(archived))) continue;
      const std::string figure = m[2].str() + " " + unit;
      const std::string named = context.describe();
      const std::string field = is_time ? "median_us" : unit == "TB/s" ? "gbps/1000" : "gbps";
      report.problems.push_back({display(root, doc) + ":" + std::to_string(line_number),
                                 "quotes " + figure + ", which matches no " + field +
                                     " of a current result" +
                                     (links_archive ? " or an archived one" : "") +
                                     (named.empty() ? "" : " for what the line names (" + named + ")"),
                                 "re-measure and quote the saved figure, link the archived result "
                                 "(archive/...) on this line, "
                                 "or add verify:ignore if it is not a kbench measurement"});
    }
  }
}

std::vector<fs::path> doc_files(const fs::path& root) {
  std::vector<fs::path> docs;
  std::error_code ec;
  if (fs::is_regular_file(root / "README.md", ec)) docs.push_back(root / "README.md");
  for (const fs::path& doc : files_under(root / "docs", ".md")) docs.push_back(doc);
  return docs;
}

}  // namespace

VerifyReport verify_tree(const VerifyOptions& options) {
  const fs::path& root = options.root;
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw UsageError("verify: root " + root.string() + " is not a directory");
  VerifyReport report;
  SavedFigures current, archived;

  std::vector<fs::path> result_dirs = options.result_dirs;
  if (result_dirs.empty()) result_dirs.push_back(root / "results");
  const ResultCheck current_check{root, root, false, report};
  for (const fs::path& dir : result_dirs)
    for (const fs::path& file : files_under(dir, ".json"))
      if (auto result = current_check.check_file(file)) current.add(*result);

  std::vector<fs::path> entries;
  for (fs::directory_iterator it(root / "archive", ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) entries.push_back(it->path());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& entry : entries) {
    const ResultCheck archive_check{root, entry, true, report};
    for (const fs::path& file : files_under(entry / "results", ".json"))
      if (auto result = archive_check.check_file(file)) archived.add(*result);
  }

  std::set<std::string> ops;
  current.add_ops_to(ops);
  archived.add_ops_to(ops);
  for (const fs::path& doc : doc_files(root))
    check_doc(root, doc, current, archived, ops, report);
  return report;
}

std::string format_problem(const VerifyProblem& problem) {
  return problem.file + ": " + problem.what + "; " + problem.fix;
}

}  // namespace kbench
