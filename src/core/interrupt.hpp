// SIGINT and SIGTERM during a measurement: the first asks the run to stop at the next visit
// boundary (the runner then writes what it has, atomically, marked incomplete); the handler
// puts the signal's default action back, so that a second signal ends the process at once.
// Nothing partial reaches the disk either way: results are written through core/atomic_file.
#pragma once

namespace kbench {

// Installs the handlers and unblocks both signals in the calling thread (idempotent; once a
// signal came, nothing: the second must end the process). Call before long work that can stop
// cleanly.
void install_interrupt_handlers();
// Whether SIGINT and SIGTERM are handled by install_interrupt_handlers' handler now.
bool interrupt_handlers_installed();
// The signal number received (SIGINT, SIGTERM), or 0.
int interrupt_signal();
// Clears the flag; for tests.
void clear_interrupt();

}  // namespace kbench
