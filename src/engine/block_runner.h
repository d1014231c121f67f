// simpler runtime — running one block of a task as a simulated core, and completing
// tasks (internal). Used by the one dispatch loop (dispatcher.h).
#pragma once

#include <cstdint>
#include <string>

#include "chip_state.h"

namespace simpler::rt {

// Runs block `block_idx` of `task` as core (`core_type`, `core_id`), which the caller has
// claimed (ChipState::claim_core). Skipped after an error; a fault latches the run's error.
// `lane` names the calling thread to the run's observer (ChipState::observer), if any.
// The kernel runs under a fault guard (fault_guard.h): a signal it raises fails the run
// with SIMPLER_CHIP_ERR_KERNEL_FAULT and poisons the engine. `cluster`: the part's
// cluster in a cluster (MIX) task (SimplerKernelContext::cluster), else null.
void run_block(ChipState& chip, TaskSlot& task, uint32_t block_idx, uint32_t core_type,
               uint32_t core_id, uint32_t lane, const SimplerClusterOps* cluster = nullptr);

// "task 0 (the 1st task the orchestration submitted)": tasks as the user numbers them
// (submit order within the run, from 0), not the engine's internal ids.
std::string task_name(const ChipState& chip, uint64_t task_id);
std::string task_name(uint64_t index);  // `index`: the task's number within its run
// task_name plus ", block b of n" for an SPMD task.
std::string block_name(const ChipState& chip, const TaskSlot& task, uint32_t block_idx);

// Counts one finished block of `task`; after its last block the task completes: its
// dependents are released and done_id is published. A dispatcher (`on_dispatcher`) will
// take one released task itself, so parked schedulers are woken only for the others; a
// cluster task's helper thread takes none and wakes them for every one. `orchestrating`:
// the caller is the thread that orchestrates (it is not parked, so the completion need not
// check whether the orchestrator waits for it: no store-load fence).
void finish_block(ChipState& chip, TaskSlot& task, bool orchestrating = false,
                  bool on_dispatcher = true);

// Completes `task` after its last block (finish_block's tail, called directly for a
// single-block task): closes and walks its fanout list, publishes done_id.
void complete_task(ChipState& chip, TaskSlot& task, bool orchestrating, bool on_dispatcher);

// Takes one block of a task popped from a ready queue (the popper owns the block counter
// until it queues the task again) and re-queues the task if it has more blocks.
uint32_t claim_block(ChipState& chip, TaskSlot& task);

}  // namespace simpler::rt
