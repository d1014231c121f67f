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
#include <functional>
#include <memory>
#include <vector>

#include "launchers.h"

namespace simpler::bench {

struct ThreadSwitches {
  long voluntary = 0;    // the caller blocked (futex wait, sleep, ...) this many times
  long involuntary = 0;  // preempted (machine load), not caused by the launch path
};

ThreadSwitches launch_window(Launcher& launcher, size_t launches, bool gated, bool mark);

// What the stream's executor spends per queued op: `enqueue` is called `ops` times while
// the executor is held by a gate, then the gate opens and `synchronize` waits for the
// drain. executor_cpu_ns is the executor thread's CPU time over the drain per op (its own
// clock: machine load does not inflate it), wall_ns the drain's elapsed time per op.
struct DrainCost {
  double executor_cpu_ns = 0;
  double wall_ns = 0;
};
// Per-call latency like collect_latency (latency.h), with the stream held by a gate for
// each batch: the launching thread alone, no executor running the earlier calls on the
// other CPU at the same time (the steady cost of the launch path itself).
void collect_latency_held(sim_stream_t stream, const std::function<void()>& enqueue,
                          const std::function<void()>& synchronize, size_t samples, size_t batch,
                          double timer_overhead, std::vector<double>& out);

DrainCost gated_drain(sim_stream_t stream, const std::function<void()>& enqueue,
                      const std::function<void()>& synchronize, size_t ops);

}  // namespace simpler::bench
