#include "record/provenance.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <optional>

#include "core/text.hpp"

namespace kbench {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a git command in `root`; its stdout, or nothing if git is missing or fails.
std::optional<std::string> git_output(const std::filesystem::path& root, const std::string& args) {
  const std::string command =
      "git -C " + shell_quote(root.string()) + " --no-optional-locks " + args + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::string out;
  std::array<char, 4096> buf;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

// The commit named by .kbench-git-commit's first line, if the file says one.
std::optional<std::string> marker_commit(const std::filesystem::path& root) {
  std::ifstream file(root / ".kbench-git-commit");
  std::string line;
  if (file && std::getline(file, line) && !trim(line).empty()) return trim(line);
  return std::nullopt;
}

nlohmann::json provenance(const std::filesystem::path& root) {
  nlohmann::json git = {{"commit", "unknown"}, {"dirty", false}, {"source", "none"}};
  const auto marker = marker_commit(root);
  if (auto head = git_output(root, "rev-parse HEAD")) {
    // results/ and archive/ are outputs, not sources: a new result must not make the tree dirty.
    auto status =
        git_output(root, "status --porcelain -- . ':(exclude)results' ':(exclude)archive'");
    const bool dirty = !status || !trim(*status).empty();
    git = {{"commit", trim(*head)}, {"dirty", dirty}, {"source", "git"}};
    // A copy of a newer tree over an older .git (the GPU machine's copy of a checkout) reads as
    // dirty at the old commit; the marker, written when the copy was made, names the commit
    // the files are at. A clean tree is its own proof and wins over any marker. Both views are
    // kept, and the manifest's hashes settle which files were measured.
    if (dirty && marker && *marker != trim(*head))
      git = {{"commit", *marker}, {"dirty", false}, {"source", ".kbench-git-commit"},
             {"git_head", trim(*head)}, {"git_dirty", true}};
  } else if (marker) {
    git = {{"commit", *marker}, {"dirty", false}, {"source", ".kbench-git-commit"}};
  }
  return {{"host", hostname()}, {"git", git}};
}

}  // namespace kbench
