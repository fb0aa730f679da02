// kbench verify [--root DIR] [--results DIR...]: checks saved results against the sources
// they measured, in the tree or in git's history, and the figures quoted in the docs against
// saved results (record/verify.hpp).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "record/manifest.hpp"
#include "record/verify.hpp"

namespace kbench {

void add_verify_command(CLI::App& app) {
  struct Options {
    std::string root;
    std::vector<std::string> result_dirs;
  };
  auto options = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "verify",
      "Check that saved results match the sources they measured (in the tree or in git's "
      "history) and that quoted figures match saved results; exit 0 when clean, 1 when "
      "problems were found");
  sub->add_option("--root", options->root, "Source tree to check (default: this binary's tree)")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--results", options->result_dirs,
                  "Folders of current results to check instead of <root>/results")
      ->check(CLI::ExistingDirectory);
  sub->callback([options] {
    VerifyOptions verify;
    verify.root = options->root.empty() ? source_root() : std::filesystem::path(options->root);
    // A folder that is not a kbench tree has nothing to verify; saying "0 problems" would pass.
    if (!std::filesystem::exists(verify.root / "kernels") && !std::filesystem::exists(verify.root / "results"))
      throw UsageError("'" + verify.root.string() + "' is not a kbench tree (no kernels/ or results/)");
    for (const std::string& dir : options->result_dirs) verify.result_dirs.emplace_back(dir);
    const VerifyReport report = verify_tree(verify);
    for (const VerifyProblem& problem : report.problems)
      std::printf("%s\n", format_problem(problem).c_str());
    for (const std::string& note : report.notes) std::printf("%s\n", note.c_str());
    std::printf("verify: %d result files, %zu problems\n", report.result_files,
                report.problems.size());
    if (!report.problems.empty())
      throw Failure("verify found " + std::to_string(report.problems.size()) + " problem(s)");
  });
}

}  // namespace kbench
