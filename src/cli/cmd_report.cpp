// Placeholder until `kbench report` lands (issue 4).
#include "cli/commands.hpp"
#include "core/errors.hpp"

namespace kbench {
void add_report_command(CLI::App& app) {
  auto* sub = app.add_subcommand("report", "Side-by-side tables of result files (not built yet)");
  sub->callback([] { throw UsageError("report is not built yet"); });
}
}  // namespace kbench
