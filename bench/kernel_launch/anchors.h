// The two anchors a launch is compared with, measured in the same process and run:
//   SPSC  push of a launch-sized message into a lock-free ring drained by a spinning
//         consumer thread (the cheapest possible cross-thread handoff)
//   host  sim_launch_host_func of an empty function on a sim stream (the driver's own
//         enqueue, the floor for anything enqueued on a caller's stream)
#pragma once

#include <cstddef>
#include <vector>

#include "simpler/sim/sim_driver.h"

namespace simpler::bench {

// Appends `samples` producer-side push costs (ns) to `out`, each push timed on its own,
// and `samples / batch` amortized costs (ns per push of a whole batch timed at once, no
// timer in between: a push is cheaper than the clock's resolution) to `amortized`. The
// consumer thread spins only while this call runs.
void collect_spsc_submit(size_t samples, size_t batch, double timer_overhead,
                         std::vector<double>& out, std::vector<double>& amortized);

// Appends `samples` enqueue costs (ns) of an empty host function on `stream`.
void collect_host_func_enqueue(sim_stream_t stream, size_t samples, size_t batch,
                               double timer_overhead, std::vector<double>& out);

}  // namespace simpler::bench
