// kbench: honest, repeatable experiments on CUDA kernels. This file only wires subcommands.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>

#include "cli/commands.hpp"
#include "cli/version.hpp"
#include "core/errors.hpp"
#include "core/host_memory.hpp"
#include "core/text.hpp"
#include "harness/progress.hpp"

namespace {

// Every message ends as one line of at most ~400 bytes that cannot act on the terminal: what a
// message echoes of its input (an op name, a path, CLI11's "not expected: ...") may hold escape
// sequences, newlines or 100 kB (core/text.hpp printable).
void say(const char* prefix, const char* message) {
  std::fprintf(stderr, "kbench: %s%s\n", prefix, kbench::printable(message, 400).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  kbench::keep_freed_host_memory();  // before anything large is allocated
  kbench::set_process_argv(argc, argv);
  kbench::log_to_stderr();  // stdout is the command's product alone: `--format json > out.json` parses
  CLI::App app{"kbench: honest, repeatable experiments on CUDA kernels"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--version", std::function<std::string()>(kbench::version_text),
                       "Version, commit, CUDA and the build's architectures, then exit");
  bool quiet = false;
  int verbose = 0;
  app.add_flag("-v,--verbose", verbose, "More log output (repeat for debug)");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors");
  app.parse_complete_callback([&] {
    spdlog::set_level(quiet ? spdlog::level::warn
                      : verbose >= 2 ? spdlog::level::trace
                      : verbose == 1 ? spdlog::level::debug
                                     : spdlog::level::info);
  });

  kbench::add_list_command(app);
  kbench::add_run_command(app);
  kbench::add_check_command(app);
  kbench::add_verify_command(app);
  kbench::add_report_command(app);
  kbench::add_probe_command(app);
  kbench::add_grid_command(app);
  kbench::add_fit_command(app);
  kbench::add_spec_command(app);
  kbench::add_compare_command(app);
  kbench::add_merge_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; real parse errors exit 2.
    if (e.get_exit_code() == 0) return app.exit(e);
    say("error: ", e.what());
    return 2;
  } catch (const kbench::UsageError& e) {
    say("error: ", e.what());
    return 2;
  } catch (const kbench::Interrupted& e) {
    say("", e.what());
    return 128 + e.signal();
  } catch (const kbench::Failure& e) {
    say("", e.what());
    return 1;
  } catch (const std::exception& e) {
    say("internal error: ", e.what());
    return 1;
  }
  return 0;
}
