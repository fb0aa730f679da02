#include "core/interrupt.hpp"

#include <pthread.h>
#include <signal.h>

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
  if (g_signal != 0) return;  // the first signal came: its default action stays for the second
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A process started with them blocked (the mask is inherited through exec) would never see
  // them, and a run could not be stopped cleanly: this thread takes them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

bool interrupt_handlers_installed() {
  struct sigaction sa {};
  return sigaction(SIGINT, nullptr, &sa) == 0 && sa.sa_handler == on_interrupt && sigaction(SIGTERM, nullptr, &sa) == 0 &&
         sa.sa_handler == on_interrupt;
}

int interrupt_signal() { return g_signal; }

void clear_interrupt() { g_signal = 0; }

}  // namespace kbench
