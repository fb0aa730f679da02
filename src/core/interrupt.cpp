#include "core/interrupt.hpp"

#include <csignal>

namespace kbench {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int sig) {
  g_signal = sig;
  std::signal(sig, SIG_DFL);  // a second one ends the process at once
}

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

int interrupt_signal() { return g_signal; }

void clear_interrupt() { g_signal = 0; }

}  // namespace kbench
