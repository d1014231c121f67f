// simpler runtime — state shared by the orchestrator, the schedulers and the caller of
// Engine::execute (internal).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "parker.h"
#include "ready_queue.h"
#include "run_status.h"
#include "simpler/kernel/kernel_abi.h"
#include "task_slot.h"

namespace simpler::rt {

inline constexpr int kCoreTypeCount = 2;  // SIMPLER_CORE_AIC, SIMPLER_CORE_AIV

struct ChipState {
  // ---- fixed at Engine::create ----
  uint64_t window = 0;  // task window size (power of two)
  uint64_t window_mask = 0;
  std::unique_ptr<TaskSlot[]> slots;
  ReadyQueue<TaskSlot> ready[kCoreTypeCount];
  Parker scheduler_parker;     // schedulers with nothing to dispatch
  Parker orchestrator_parker;  // the orchestrator waiting for a completion
  // The task the parked orchestrator waits for: only its completion wakes it (one
  // wake-up per wait instead of one per completed task).
  std::atomic<uint64_t> awaited_task{0};
  Edge closed_fanout{nullptr, nullptr};  // address marks a completed task's fanout list
  std::atomic<bool> shutdown{false};

  // ---- per run ----
  RunStatus status;
  std::atomic<bool> record_swimlane{false};

  TaskSlot& slot(uint64_t id) { return slots[id & window_mask]; }
  Edge* closed() { return &closed_fanout; }

  // Latches the run's first error and wakes every waiter so it can observe it.
  void fail(int32_t code, const std::string& message) {
    if (status.latch(code, message)) {
      scheduler_parker.notify_all();
      orchestrator_parker.notify_all();
    }
  }

  // Queues a task whose last dependency was released. The queues are sized so this
  // cannot fail; if the invariant ever broke we wait for a consumer instead of dropping
  // the task.
  void enqueue_ready(TaskSlot& task) {
    while (!ready[task.core_type].push(&task)) std::this_thread::yield();
  }
};

}  // namespace simpler::rt
