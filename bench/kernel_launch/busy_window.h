// Launches on a busy device, for counting what the caller's thread does in the kernel.
//
//   gated    the stream is held by a host function (blocked on a gate) for the whole
//            window, so every launch queues behind work in progress
//   running  the stream is executing earlier launches of the same context while the
//            window's launches are enqueued (executor and caller touch the queue together)
//
// With `mark`, the calling thread issues getppid() right before and right after the
// window's launches: `strace -f -e trace=futex,getppid` then brackets the caller's futex
// calls of exactly the window (scripts/bench.sh counts them).
#pragma once

#include <cstddef>

#include "launchers.h"

namespace simpler::bench {

struct ThreadSwitches {
  long voluntary = 0;    // the caller blocked (futex wait, sleep, ...) this many times
  long involuntary = 0;  // preempted (machine load), not caused by the launch path
};

ThreadSwitches launch_window(Launcher& launcher, size_t launches, bool gated, bool mark);

}  // namespace simpler::bench
