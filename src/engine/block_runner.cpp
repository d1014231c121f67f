// Running a block as a core, completing tasks.
#include "block_runner.h"

#include <chrono>
#include <string>

#include "fault_guard.h"
#include "simpler/abi/status.h"
#include "support/clock.h"

namespace simpler::rt {
namespace {

const char* core_type_name(uint32_t type) { return type == SIMPLER_CORE_AIC ? "AIC" : "AIV"; }

}  // namespace

void complete_task(ChipState& chip, TaskSlot& task, bool orchestrating, bool on_dispatcher) {
  // Edges are pushed by the orchestrating thread only (Orchestrator::link): when it
  // completes the task itself, nobody can push meanwhile and closing the list needs no
  // read-modify-write.
  Edge* edge = nullptr;
  if (orchestrating) {
    edge = task.fanout.load(std::memory_order_acquire);
    task.fanout.store(chip.closed(), std::memory_order_release);
  } else {
    edge = task.fanout.exchange(chip.closed(), std::memory_order_acq_rel);
  }
  int released = 0;
  while (edge != nullptr) {
    Edge* next = edge->next;  // read before the decrement: the edge may be recycled after it
    TaskSlot* consumer = edge->consumer;
    if (consumer->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      chip.enqueue_ready(*consumer);
      ++released;
    }
    edge = next;
  }
  const uint64_t id = task.id;
  // A pipelined run's track stays until this task counted itself; any other run's may be
  // reused as soon as done_id is published: decide before.
  RunTrack* const counted = task.run->counted ? task.run : nullptr;
  task.done_id.store(id, std::memory_order_release);  // last touch of the slot
  // The orchestrator may wait for this completion (only that one wakes it); not when it
  // completed the task itself.
  if (!orchestrating && chip.orchestrator_parker.has_waiters_after_publish() &&
      chip.awaited_task.load(std::memory_order_relaxed) == id) {
    chip.orchestrator_parker.wake_all();
  }
  // A dispatcher takes one released task itself (its loop goes on); a cluster task's
  // helper thread takes none, so it wakes a dispatcher for each.
  const int take_here = on_dispatcher ? 1 : 0;
  if (released > take_here) chip.wake_schedulers(released - take_here);
  if (counted != nullptr) counted->task_done();  // a pipelined run ends with its last task
}

uint32_t claim_block(ChipState& chip, TaskSlot& task) {
  const uint32_t block = task.next_block.load(std::memory_order_relaxed);
  task.next_block.store(block + 1, std::memory_order_relaxed);
  if (block + 1 < task.block_num) {
    chip.enqueue_ready(task);  // the remaining blocks go to whichever core is free
    chip.wake_schedulers(1);
  }
  return block;
}

void report_block_fault(ChipState& chip, TaskSlot& task, uint32_t block_idx, uint32_t core_type,
                        uint32_t core_id, bool returned, const FaultInfo& signal, int32_t fault) {
  if (!returned) {
    chip.poisoned.store(true, std::memory_order_release);
    const std::string message = "kernel func_id " + std::to_string(task.func_id) +
                                " crashed with " + describe_fault(signal) + " in " +
                                block_name(chip, task, block_idx) + " on " +
                                core_type_name(core_type) + " core " + std::to_string(core_id) +
                                "; the context is now failed: close it and create a new one";
    // The run of this task first (its handle names this kernel), then every other run in
    // flight: the context is failed.
    chip.fail(*task.run, SIMPLER_CHIP_ERR_KERNEL_FAULT, message);
    chip.fail_all(SIMPLER_CHIP_ERR_KERNEL_FAULT, message);
  } else if (fault != 0) {
    chip.fail(*task.run, SIMPLER_CHIP_ERR_KERNEL_FAULT,
              "kernel func_id " + std::to_string(task.func_id) + " reported fault code " +
                  std::to_string(fault) + " in " + block_name(chip, task, block_idx) + " on " +
                  core_type_name(core_type) + " core " + std::to_string(core_id));
  }
}

std::string task_name(const ChipState& chip, uint64_t task_id) {
  return task_name(task_id - chip.first_task);
}

std::string task_name(uint64_t index) {
  const uint64_t nth = index + 1;
  const char* suffix = (nth % 100 >= 11 && nth % 100 <= 13) ? "th"
                       : nth % 10 == 1                      ? "st"
                       : nth % 10 == 2                      ? "nd"
                       : nth % 10 == 3                      ? "rd"
                                                            : "th";
  return "task " + std::to_string(index) + " (the " + std::to_string(nth) + suffix +
         " task the orchestration submitted)";
}

std::string block_name(const ChipState& chip, const TaskSlot& task, uint32_t block_idx) {
  (void)chip;
  std::string name = task_name(task.id - task.run->first_id);
  if (task.block_num > 1) {
    name += ", block " + std::to_string(block_idx) + " of " + std::to_string(task.block_num);
  }
  return name;
}

void finish_block(ChipState& chip, TaskSlot& task, bool orchestrating, bool on_dispatcher) {
  // Read before counting: once another block's count is the last, the slot may complete and
  // be reused by a new task (a new block_num) while this thread still compares.
  const uint32_t blocks = task.block_num;
  if (blocks == 1 || task.blocks_done.fetch_add(1, std::memory_order_acq_rel) + 1 == blocks) {
    complete_task(chip, task, orchestrating, on_dispatcher);
  }
}

}  // namespace simpler::rt
