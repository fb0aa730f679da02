// How the process's host allocator treats large blocks. Preparing a case allocates and frees
// host vectors of up to gigabytes (inputs in double, packed inputs, oracle outputs, output
// bits), one case after another. glibc serves every block above 32 MiB with a fresh mmap and
// unmaps it when freed, so each case faults every 4 KiB page of its vectors in again: on the
// machines kbench runs on (virtual machines, transparent huge pages only where advised) that
// first touch costs seconds per GB (1.2 GB zeroed: 2.8 s fresh, 0.11 s reused, measured on
// the build machine), more than generating, rounding and checking those values together.
#pragma once

namespace kbench {

// Serves large blocks from the heap and never trims it, so that memory freed by one case is
// reused, already faulted in, by the next. The process keeps its peak footprint (one case's
// host data at a time) until it exits. Call once, first thing in main.
void keep_freed_host_memory();

}  // namespace kbench
