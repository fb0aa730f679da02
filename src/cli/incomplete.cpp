// What a command says after writing a result that a signal cut short (runner.cpp marks it
// meta.incomplete): the file is there, whole and valid, with the visits that were done; the
// command still ends as the signal asked, with status 128 + the signal.
#include <csignal>

#include "cli/commands.hpp"
#include "core/errors.hpp"

namespace kbench {

void end_if_incomplete(const Result& r, const std::filesystem::path& written) {
  const auto it = r.meta.find("incomplete");
  if (it == r.meta.end()) return;
  const std::string sig = it->value("signal", "SIGINT");
  throw Interrupted(sig + ": wrote " + written.string() + " with " + std::to_string(it->value("visits_done", 0)) +
                        " of " + std::to_string(it->value("visits_planned", 0)) + " visits, marked incomplete",
                    sig == "SIGTERM" ? SIGTERM : SIGINT);
}

}  // namespace kbench
