// kbench check: every selected variant against the FP64 oracle, no timing.
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/sweep_options.hpp"
#include "core/errors.hpp"
#include "experiments/sweep.hpp"

namespace kbench {

void add_check_command(CLI::App& app) {
  auto* sub = app.add_subcommand("check", "Check every selected variant against the FP64 oracle (no timing)");
  auto opts = add_sweep_options(sub, /*timing=*/false);
  sub->callback([opts] {
    std::vector<std::string> lines;
    const bool ok = check_experiment(sweep_experiment(resolve_sweep_settings(*opts)), lines);
    for (const auto& l : lines) std::printf("%s\n", l.c_str());
    if (!ok) throw Failure("some variants failed their check");
  });
}

}  // namespace kbench
