#include "record/verify_docs.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>

#include "core/shape.hpp"

namespace kbench {
namespace fs = std::filesystem;

void SavedFigures::add(const Result& result, const std::string& file) {
  for (const Record& r : result.records) {
    if (!is_timed(r)) continue;  // its zeros are no figure a doc could quote
    const std::string shape = shape_string(r.shape);
    if (std::isfinite(r.median_us))
      median_us.push_back({r.median_us, r.op, r.dtype, shape, r.cache, r.timer, file});
    if (std::isfinite(r.gbps))
      gbps.push_back({r.gbps, r.op, r.dtype, shape, r.cache, r.timer, file});
  }
  for (const char* key : {"timer_floor", "timer_floor_before", "timer_floor_start", "visit_floors"}) {
    const auto floors = result.extra.find(key);
    if (floors == result.extra.end() || !floors->is_array()) continue;
    for (const auto& f : *floors)
      if (f.is_object() && f.contains("median_us") && f["median_us"].is_number())
        median_us.push_back({f["median_us"].get<double>(), "", "", "",
                             f.value("cache", std::string{}), f.value("timer", std::string{}),
                             file});
  }
}

void SavedFigures::add_ops_to(std::set<std::string>& ops) const {
  for (const Figure& f : median_us)
    if (!f.op.empty()) ops.insert(f.op);
}

namespace {

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
    else if (w == "events" || w == "graph" || w == "cupti") context.timer.insert(w);
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

// The result files under archive/ that a line names, relative to the root: a Markdown link
// target "](path)" or "](<path>)" resolved from the doc's folder, without its #anchor, or a code
// span that starts with archive/ (`archive/sweep/<file>.json.gz`), a path from the root as the
// docs write every path in code.
std::set<std::string> cited_archive_files(const std::string& line, const fs::path& root,
                                          const fs::path& doc) {
  static const std::regex link("\\]\\(<?([^)>\\s]*archive/[^)>\\s]*)>?\\)");
  static const std::regex code("`(archive/[^`\\s]+)`");
  std::set<std::string> files;
  for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
    std::string target = (*it)[1].str();
    target = target.substr(0, target.find('#'));
    files.insert(display_path(root, (doc.parent_path() / target).lexically_normal()));
  }
  for (std::sregex_iterator it(line.begin(), line.end(), code), end; it != end; ++it)
    files.insert(fs::path((*it)[1].str()).lexically_normal().generic_string());
  return files;
}

// A line's block is the run of non-blank lines it stands in (a paragraph, a list, a table). A
// table or a list takes the files of the block before it too: the sentence that introduces it.
bool starts_table_or_list(const std::string& line) {
  static const std::regex item("^\\s*(\\||[-*+] |[0-9]+[.)] )");
  return std::regex_search(line, item);
}

// |saved - quoted| within half a unit of the last quoted digit: "4.3 us" matches 4.26 and
// 4.349 but not 4.36. A tiny relative slack absorbs binary rounding of the decimal bounds.
// Only figures that agree with what the line names count.
// Archived figures count only from the files in `linked` (nullptr: any file counts).
bool matches_at_precision(double quoted, int decimals, const std::vector<Figure>& saved,
                          double scale, const LineContext& context,
                          const std::set<std::string>* linked) {
  const double half_unit = 0.5 * std::pow(10.0, -decimals);
  return std::any_of(saved.begin(), saved.end(), [&](const Figure& f) {
    return std::fabs(f.value / scale - quoted) <= half_unit * (1 + 1e-9) && context.agrees(f) &&
           (!linked || linked->count(f.file));
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

// A docs line to check: its number, its text, and the archived files its block cites.
struct DocLine {
  int number;
  std::string text;
  std::set<std::string> cited;
};

// The lines of a doc outside fenced code, each with what its block cites (see above).
std::vector<DocLine> doc_lines(std::istream& in, const fs::path& root, const fs::path& doc) {
  std::vector<DocLine> lines;
  std::string fence;
  std::size_t block_start = 0;                // index in `lines` of the current block's first
  std::set<std::string> block_cites, previous_cites;
  bool in_block = false;
  const auto close_block = [&] {
    for (std::size_t i = block_start; i < lines.size(); ++i)
      lines[i].cited.insert(block_cites.begin(), block_cites.end());
    if (in_block) previous_cites = std::move(block_cites);
    block_cites.clear();
    in_block = false;
  };
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (is_fence(line, fence) || !fence.empty() ||
        line.find_first_not_of(" \t") == std::string::npos) {
      close_block();
      continue;
    }
    if (!in_block) {
      block_start = lines.size();
      in_block = true;
      if (starts_table_or_list(line)) block_cites = previous_cites;
    }
    const std::set<std::string> cited = cited_archive_files(line, root, doc);
    block_cites.insert(cited.begin(), cited.end());
    lines.push_back({number, std::move(line), {}});
  }
  close_block();
  return lines;
}

void check_doc(const fs::path& root, const fs::path& doc, const SavedFigures& current,
               const SavedFigures& archived, const std::set<std::string>& ops,
               VerifyReport& report) {
  std::ifstream in(doc, std::ios::binary);
  if (!in) {
    report.problems.push_back({display_path(root, doc), "cannot be read", "check its permissions"});
    return;
  }
  for (const DocLine& doc_line : doc_lines(in, root, doc)) {
    const std::string& line = doc_line.text;
    if (line.find("verify:ignore") != std::string::npos) continue;
    const bool cites_archive = !doc_line.cited.empty();
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
      auto saved_in = [&](const SavedFigures& f, const std::set<std::string>* only) {
        return matches_at_precision(quoted, decimals, is_time ? f.median_us : f.gbps, scale,
                                    context, only);
      };
      if (saved_in(current, nullptr) || (cites_archive && saved_in(archived, &doc_line.cited)))
        continue;
      const std::string figure = m[2].str() + " " + unit;
      const std::string named = context.describe();
      const std::string field = is_time ? "median_us" : unit == "TB/s" ? "gbps/1000" : "gbps";
      report.problems.push_back(
          {display_path(root, doc) + ":" + std::to_string(doc_line.number),
           "quotes " + figure + ", which matches no " + field + " of a current result" +
               (cites_archive ? " or of an archived result its paragraph cites" : "") +
               (named.empty() ? "" : " for what the line names (" + named + ")"),
           "re-measure and quote the saved figure, cite the archived result file in its "
           "paragraph or the sentence before its table or list "
           "([run](../archive/<experiment>/<file>.json.gz) or `archive/<experiment>/<file>`), "
           "or add verify:ignore if it is not a kbench measurement"});
    }
  }
}

// README.md and docs/**/*.md, less docs/records/ (scratch logs: their figures come from
// scratch runs that are not results, and would need verify:ignore on every line).
std::vector<fs::path> doc_files(const fs::path& root) {
  std::vector<fs::path> docs;
  std::error_code ec;
  if (fs::is_regular_file(root / "README.md", ec)) docs.push_back(root / "README.md");
  for (fs::recursive_directory_iterator it(root / "docs", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_directory(ec) && it->path() == root / "docs" / "records") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && it->path().extension() == ".md") docs.push_back(it->path());
  }
  std::sort(docs.begin(), docs.end());
  return docs;
}

}  // namespace

void check_docs(const fs::path& root, const SavedFigures& current, const SavedFigures& archived,
                VerifyReport& report) {
  std::set<std::string> ops;
  current.add_ops_to(ops);
  archived.add_ops_to(ops);
  for (const fs::path& doc : doc_files(root)) check_doc(root, doc, current, archived, ops, report);
}

}  // namespace kbench
