// kbench list: ops, their variants, and the named experiments.
#include <cstdio>
#include <vector>

#include "cli/commands.hpp"
#include "kernels/all_ops.hpp"

namespace kbench {

namespace {
std::vector<std::string> g_argv;
}

const std::vector<std::string>& process_argv() { return g_argv; }
void set_process_argv(int argc, char** argv) { g_argv.assign(argv, argv + argc); }

void add_list_command(CLI::App& app) {
  auto* sub = app.add_subcommand("list", "List ops, variants and experiments");
  sub->callback([] {
    for (const Op& op : registry().ops()) {
      std::printf("%s: %s\n", op.name.c_str(), op.summary.c_str());
      for (const OpParam& p : op.params)
        std::printf("  --param %s=%g (default; %g to %g): %s\n", p.name.c_str(), p.fallback, p.lo, p.hi, p.what.c_str());
      for (const Variant* v : registry().variants(op.name))
        std::printf("  %-14s %s%s\n", v->name.c_str(), v->baseline ? "[baseline] " : "", v->summary.c_str());
    }
    std::printf("\nexperiments: run (sweep), probe, grid, fit, spec\n");
  });
}

}  // namespace kbench
