// simpler runtime — running the parts of a one-cluster task cooperatively on the thread
// that starts it (internal).
//
// On a host with fewer hardware threads than a cluster has parts, handing parts to helper
// threads costs a wake-up per part and per parked hand-off (tens to hundreds of µs on a
// small VM: docs/performance.md section 7). Here every part is a fiber of the calling
// thread (fiber.h): a part runs until it returns or waits for a flag or barrier that is
// not there yet (ClusterSync, cooperative mode), then the next part that may go on runs.
// Kernels that synchronise through the cluster API see what the promise says (all parts
// started; a wait ends when a partner sets the flag or reaches the barrier); parts that
// never wait run one after another.
#pragma once

#include <cstdint>
#include <functional>

namespace simpler::rt {

class ClusterSync;

// Runs run_part(i) for i in 0..parts-1 (at most kClusterParts) as fibers on the calling
// thread, resuming a waiting part when sync.may_resume(i); returns when all returned.
// False (nothing ran) if the fibers' stacks could not be mapped.
bool run_parts_cooperatively(uint32_t parts, ClusterSync& sync,
                             const std::function<void(uint32_t part)>& run_part);

}  // namespace simpler::rt
