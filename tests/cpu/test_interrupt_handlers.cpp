// The interrupt handlers without a GPU: a blocked SIGINT is unblocked, a handler a library put in
// place is noticed and replaced, and a raised signal sets the flag instead of ending the process.
// (The GPU test test_interrupt.cpp sends a real SIGINT into a run's visits.)
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include "core/interrupt.hpp"

namespace kbench {
namespace {

bool blocked(int sig) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, sig) == 1;
}

TEST(InterruptHandlers, UnblockReplaceAndCatch) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ASSERT_TRUE(blocked(SIGINT));
  install_interrupt_handlers();
  EXPECT_FALSE(blocked(SIGINT));
  EXPECT_TRUE(interrupt_handlers_installed());

  signal(SIGINT, SIG_IGN);  // what a library might do
  EXPECT_FALSE(interrupt_handlers_installed());
  install_interrupt_handlers();
  ASSERT_TRUE(interrupt_handlers_installed());

  clear_interrupt();
  raise(SIGINT);
  EXPECT_EQ(interrupt_signal(), SIGINT);
  EXPECT_FALSE(interrupt_handlers_installed());  // the default action is back, for a second signal
  clear_interrupt();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

}  // namespace
}  // namespace kbench
