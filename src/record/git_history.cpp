#include "record/git_history.hpp"

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "core/scratch_dir.hpp"
#include "core/subprocess.hpp"
#include "core/text.hpp"

namespace kbench {
namespace fs = std::filesystem;

namespace {

// A tree of a few thousand files compares in well under a second; a git that hangs (a lock,
// a network filesystem) must not hang a run.
constexpr double kGitTimeoutSeconds = 120;

GitReply run_git(const std::vector<std::string>& args, const fs::path& cwd,
                 std::map<std::string, std::string> env, const fs::path& stdin_file) {
  std::vector<std::string> argv = {"git", "--no-optional-locks"};
  argv.insert(argv.end(), args.begin(), args.end());
  // Scope paths are names, never patterns: ':' or '*' in one must not become pathspec magic.
  env.emplace("GIT_LITERAL_PATHSPECS", "1");
  ProcessOptions options;
  options.cwd = cwd;
  options.env = std::move(env);
  options.stdin_file = stdin_file;
  options.timeout_s = kGitTimeoutSeconds;
  options.keep_stderr = true;
  const ProcessResult r = run_process(argv, options);
  GitReply reply;
  reply.ok = r.ok();
  reply.out = r.out;
  if (!r.started) reply.error = "git could not be run";
  else if (r.timed_out) reply.error = "git " + args.front() + " timed out";
  else if (!r.ok()) {
    const std::string said = trim(r.err.substr(0, r.err.find('\n')));
    reply.error = said.empty() ? "git " + args.front() + " failed" : said;
  }
  return reply;
}

std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, '\0');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// git apply --include takes a glob; a path is matched as itself.
std::string literal_glob(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

GitRepo::GitRepo(fs::path root) : root_(std::move(root)) {}

GitReply GitRepo::run(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env,
                      const fs::path& stdin_file) const {
  return run_git(args, root_, env, stdin_file);
}

bool GitRepo::is_checkout() const {
  const GitReply top = run({"rev-parse", "--show-toplevel"});
  if (!top.ok) return false;
  std::error_code ec1, ec2;
  const fs::path a = fs::canonical(trim(top.out), ec1), b = fs::canonical(root_, ec2);
  return !ec1 && !ec2 && a == b;
}

bool GitRepo::is_shallow() const {
  const GitReply r = run({"rev-parse", "--is-shallow-repository"});
  return r.ok && trim(r.out) == "true";
}

std::optional<std::string> GitRepo::resolve_commit(const std::string& rev) const {
  if (rev.empty() || rev.starts_with("-")) return std::nullopt;
  const GitReply r = run({"rev-parse", "--verify", "--quiet", rev + "^{commit}"});
  if (!r.ok || trim(r.out).empty()) return std::nullopt;
  return trim(r.out);
}

std::optional<std::map<std::string, std::string>> GitRepo::read_files(
    const std::string& commit, const std::vector<std::string>& paths) const {
  std::map<std::string, std::string> files;
  if (paths.empty()) return files;
  ScratchDir scratch("cat-file");
  std::string requests;
  for (const std::string& path : paths) requests += commit + ":" + path + "\n";
  const GitReply r = run({"cat-file", "--batch"}, {}, scratch.write("requests", requests));
  if (!r.ok) return std::nullopt;
  // Per request: "<oid> <type> <size>\n<content>\n", or "<request> missing\n".
  std::size_t at = 0;
  for (const std::string& path : paths) {
    const std::size_t eol = r.out.find('\n', at);
    if (eol == std::string::npos) return std::nullopt;
    std::istringstream header(r.out.substr(at, eol - at));
    at = eol + 1;
    std::string oid, type;
    std::size_t size = 0;
    if (!(header >> oid >> type >> size)) continue;  // missing or ambiguous: no such file
    if (at + size > r.out.size()) return std::nullopt;
    if (type == "blob") files[path] = r.out.substr(at, size);
    at += size + 1;
  }
  return files;
}

TreeComparison compare_worktree(const GitRepo& repo, const std::string& commit,
                                const std::vector<std::string>& scope) {
  TreeComparison c;
  const auto failed = [&c](std::string why) {
    c = TreeComparison{};
    c.error = std::move(why);
    return c;
  };
  const auto full = repo.resolve_commit(commit);
  if (!full) return failed("commit " + commit + " is not in this repository");
  std::vector<std::string> pathspec = {*full, "--"};
  pathspec.insert(pathspec.end(), scope.begin(), scope.end());
  const auto with_scope = [&pathspec](std::vector<std::string> args) {
    args.insert(args.end(), pathspec.begin(), pathspec.end());
    return args;
  };
  // `git add` refuses a path that neither the tree nor the commit has; one deleted from the
  // tree must still be added, so that its deletion shows.
  const GitReply listed = repo.run(with_scope({"ls-tree", "-z", "--name-only"}));
  if (!listed.ok) return failed(listed.error);
  const std::vector<std::string> names = split_nul(listed.out);
  const std::set<std::string> in_commit(names.begin(), names.end());
  std::vector<std::string> present;
  for (const std::string& path : scope) {
    std::error_code ec;
    if (in_commit.count(path) || fs::exists(fs::symlink_status(repo.root() / path, ec)))
      present.push_back(path);
  }

  std::optional<ScratchDir> scratch;
  try {
    scratch.emplace("index");
  } catch (const UsageError& e) {  // no temporary folder: not compared, never a failed run
    return failed(e.what());
  }
  const std::map<std::string, std::string> env = {
      {"GIT_INDEX_FILE", (scratch->path() / "index").string()}};
  if (const GitReply r = repo.run({"read-tree", *full}, env); !r.ok) return failed(r.error);
  if (!present.empty()) {
    std::vector<std::string> add = {"add", "-A", "--"};
    add.insert(add.end(), present.begin(), present.end());
    if (const GitReply r = repo.run(add, env); !r.ok) return failed(r.error);
  }
  const GitReply names_changed =
      repo.run(with_scope({"diff-index", "--cached", "--no-renames", "-z", "--name-only"}), env);
  if (!names_changed.ok) return failed(names_changed.error);
  c.changed = split_nul(names_changed.out);
  if (c.changed.empty()) return c;
  const GitReply patch = repo.run(
      with_scope({"diff-index", "--cached", "--no-renames", "-p", "--binary", "--full-index"}), env);
  if (!patch.ok) return failed(patch.error);
  c.diff = patch.out;
  return c;
}

RebuiltFiles apply_diff(const std::map<std::string, std::string>& files, const std::string& diff,
                        const std::vector<std::string>& paths) {
  RebuiltFiles rebuilt;
  if (diff.empty() || paths.empty()) {
    for (const std::string& path : paths)
      if (files.count(path)) rebuilt.files[path] = files.at(path);
    return rebuilt;
  }
  ScratchDir scratch("rebuild");
  const fs::path tree = scratch.path() / "tree";
  fs::create_directories(tree);
  for (const auto& [path, content] : files) scratch.write(fs::path("tree") / path, content);
  const fs::path patch = scratch.write("diff.patch", diff);
  std::vector<std::string> args = {"apply", "--whitespace=nowarn"};
  for (const std::string& path : paths) args.push_back("--include=" + literal_glob(path));
  args.push_back(patch.string());
  // The scratch folder is the ceiling: git must not find a repository above the tree and
  // apply the patch relative to it.
  const GitReply r = run_git(args, tree, {{"GIT_CEILING_DIRECTORIES", scratch.path().string()}}, {});
  if (!r.ok) {
    rebuilt.error = r.error;
    return rebuilt;
  }
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_regular_file(tree / path, ec)) rebuilt.files[path] = read_bytes(tree / path);
  }
  return rebuilt;
}

}  // namespace kbench
