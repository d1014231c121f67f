// simpler runtime — scheduling cluster (MIX) tasks (internal).
//
// A cluster task takes block_num whole clusters (each 1 AIC + 2 AIV cores) at once and
// runs its kernel on all their cores together (cluster_crew.h, cluster_sync.h).
//
// No starvation: single-core tasks claim any idle core, so with a steady stream of them a
// whole cluster would rarely be idle at one instant. A dispatcher that finds a cluster task
// ready therefore *reserves* the clusters it needs (the ones with the most idle cores):
// their idle cores are held for it (ChipState::kCoreHeld) and their busy cores are marked
// (kCoreBusyReserved), so the block that ends on such a core hands the core over instead
// of freeing it. The thread that hands over the last missing core starts the task. A
// cluster task thus waits at most for the blocks already running on its clusters.
//
// No idle cores: one reservation exists at a time (other cluster tasks stay queued
// meanwhile), so at most one task's clusters hold idle cores, and only until the blocks
// already running there end; every other core keeps taking single-core tasks, and the
// dispatcher that reserved goes straight back to them. A scheduler that starts a task at
// once runs its first part (or all its parts as fibers: cluster_fibers.h); so does the
// orchestrating thread while it waits for completions, but never while it submits.
#pragma once

#include <cstdint>

namespace simpler::rt {

struct ChipState;

// If a cluster task is ready and no reservation is pending, reserves clusters for it and
// starts it when they are all idle already. True if a task was started. With `here` (the
// caller's lane), the caller runs the task's first part itself before it returns.
// `orchestrating`: the caller is the orchestrating thread, outside the schedulers' awake
// budget (a scheduler leaves the budget while it runs a part).
bool start_cluster_task(ChipState& chip, const uint32_t* here = nullptr,
                        bool orchestrating = false);

// Releases a core the caller claimed; when the release hands the core to the pending
// reservation and completes it, starts the reserved cluster task.
void release_core(ChipState& chip, uint32_t type, uint32_t core);

}  // namespace simpler::rt
