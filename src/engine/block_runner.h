// simpler runtime — running one block of a task as a simulated core, and completing
// tasks (internal). Used by the one dispatch loop (dispatcher.h).
#pragma once

#include <cstdint>
#include <string>

#include "chip_state.h"
#include "fault_guard.h"
#include "support/clock.h"

namespace simpler::rt {

// Runs block `block_idx` of `task` as core (`core_type`, `core_id`), which the caller has
// claimed (ChipState::claim_core). Skipped after an error; a fault latches the run's error.
// `lane` names the calling thread to the run's observer (ChipState::observer), if any.
// The kernel runs under a fault guard (fault_guard.h): a signal it raises fails the run
// with SIMPLER_CHIP_ERR_KERNEL_FAULT and poisons the engine. `cluster`: the part's
// cluster in a cluster (MIX) task (SimplerKernelContext::cluster), else null.
// Inline: it runs once per block, and its callers (the dispatch loop, the immediate run)
// would otherwise pay a second frame around guarded_call's.
[[gnu::always_inline]] inline void run_block(ChipState& chip, TaskSlot& task, uint32_t block_idx,
                                             uint32_t core_type, uint32_t core_id, uint32_t lane,
                                             const SimplerClusterOps* cluster = nullptr);
// run_block with the kernel's argument vector already built at `argv + 1` (argv[0] is
// set to the block's context): the immediate run builds it in place, no second copy. The
// kernel may write to it, so the caller builds it again for every block.
[[gnu::always_inline]] inline void run_block_in_place(ChipState& chip, TaskSlot& task,
                                                      uint32_t block_idx, uint32_t core_type,
                                                      uint32_t core_id, uint32_t lane,
                                                      int64_t* argv,
                                                      const SimplerClusterOps* cluster = nullptr);

// run_block's report after a caught signal (`returned` false: poisons the engine) or a
// fault code the kernel set: fails the run with SIMPLER_CHIP_ERR_KERNEL_FAULT (cold).
void report_block_fault(ChipState& chip, TaskSlot& task, uint32_t block_idx, uint32_t core_type,
                        uint32_t core_id, bool returned, const FaultInfo& signal, int32_t fault);

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

// The observer's view of a block (observed runs only).
inline BlockView block_view(const TaskSlot& task, uint32_t block_idx, uint32_t core_type,
                            uint32_t core_id) {
  return BlockView{task.id - task.run->first_id, task.func_id, block_idx, core_type, core_id};
}

inline void run_block(ChipState& chip, TaskSlot& task, uint32_t block_idx, uint32_t core_type,
                      uint32_t core_id, uint32_t lane, const SimplerClusterOps* cluster) {
  int64_t argv[1 + CHIP_MAX_SIGNATURE];  // argv[0] = &context, the kernel sees argv + 1
  // A plain loop: a task has a handful of arguments, fewer than a memcpy call costs.
  const int64_t* const args = task.args;
  for (uint32_t i = 0, n = task.arg_count; i < n; ++i) argv[1 + i] = args[i];
  run_block_in_place(chip, task, block_idx, core_type, core_id, lane, argv, cluster);
}

inline void run_block_in_place(ChipState& chip, TaskSlot& task, uint32_t block_idx,
                               uint32_t core_type, uint32_t core_id, uint32_t lane, int64_t* argv,
                               const SimplerClusterOps* cluster) {
  // After an error the remaining tasks of that run are skipped (other runs go on).
  if (task.run->status.failed()) return;
  int32_t fault = 0;
  SimplerKernelContext context{};
  context.block_idx = block_idx;
  context.block_num = task.block_num;
  context.core_type = core_type;
  context.core_id = core_id;
  context.fault = &fault;
  context.cluster = cluster;
  argv[0] = static_cast<int64_t>(reinterpret_cast<intptr_t>(&context));
  RunObserver* observer = chip.observer.load(std::memory_order_relaxed);
  const bool tracked = chip.running.tracking.load(std::memory_order_relaxed);
  if (tracked)
    chip.running.enter(core_type, core_id, task.id, task.func_id, block_idx,
                       support::steady_now_ns());
  // Built only when observed: an unobserved block pays the pointer check alone (a lambda
  // capturing by reference built its closure, and spilled what it names, every block).
  if (observer != nullptr) [[unlikely]]
    observer->on_entry(lane, block_view(task, block_idx, core_type, core_id));
  FaultInfo signal;
  const simpler_kernel_entry_fn entry = task.entry;
  int64_t* const kernel_args = &argv[1];
  // By value: the closure holds the two words themselves, not their addresses.
  const bool returned = guarded_call([entry, kernel_args] { entry(kernel_args); }, &signal);
  if (observer != nullptr) [[unlikely]]
    observer->on_exit(lane, block_view(task, block_idx, core_type, core_id));
  if (tracked) chip.running.leave(core_type, core_id);
  if (!returned || fault != 0) [[unlikely]]
    report_block_fault(chip, task, block_idx, core_type, core_id, returned, signal, fault);
}

}  // namespace simpler::rt
