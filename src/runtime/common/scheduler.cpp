// The scheduler loop: dispatch to core mailboxes, execute, harvest, complete.
#include "scheduler.h"

#include <chrono>
#include <cstring>
#include <string>

#include "backoff.h"
#include "simpler/abi/status.h"

namespace simpler::rt {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* core_type_name(uint32_t type) { return type == SIMPLER_CORE_AIC ? "AIC" : "AIV"; }

}  // namespace

Scheduler::Scheduler(ChipState& chip, int32_t first_cluster, int32_t cluster_count)
    : chip_(chip), cores_(std::make_unique<Core[]>(static_cast<size_t>(cluster_count) * 3)) {
  size_t n = 0;
  for (int32_t c = first_cluster; c < first_cluster + cluster_count; ++c) {
    Core& aic = cores_[n++];
    aic.type = SIMPLER_CORE_AIC;
    aic.id = static_cast<uint32_t>(c);
    by_type_[SIMPLER_CORE_AIC].push_back(&aic);
    for (int k = 0; k < 2; ++k) {
      Core& aiv = cores_[n++];
      aiv.type = SIMPLER_CORE_AIV;
      aiv.id = static_cast<uint32_t>(2 * c + k);
      by_type_[SIMPLER_CORE_AIV].push_back(&aiv);
    }
  }
  events_.reserve(1024);
}

void Scheduler::run() {
  while (!chip_.shutdown.load(std::memory_order_acquire)) {
    if (!step()) idle();
  }
}

bool Scheduler::step() {
  Core* posted[kCoreTypeCount];
  int count = 0;
  for (int k = 0; k < kCoreTypeCount; ++k) {
    const uint32_t type = (first_type_ + static_cast<uint32_t>(k)) % kCoreTypeCount;
    if (by_type_[type].empty()) continue;
    TaskSlot* task = chip_.ready[type].try_pop();
    if (task == nullptr) continue;
    // The popper owns the task's block counter until it queues the task again.
    const uint32_t block = task->next_block.load(std::memory_order_relaxed);
    task->next_block.store(block + 1, std::memory_order_relaxed);
    if (block + 1 < task->block_num) {
      chip_.enqueue_ready(*task);  // the remaining blocks go to whichever core is free
      chip_.scheduler_parker.notify_one();
    }
    Core& core = next_core(type);
    post(core, *task, block);
    posted[count++] = &core;
  }
  first_type_ ^= 1u;
  for (int i = 0; i < count; ++i) execute(*posted[i]);
  for (int i = 0; i < count; ++i) harvest(*posted[i]);
  return count > 0;
}

Scheduler::Core& Scheduler::next_core(uint32_t type) {
  std::vector<Core*>& cores = by_type_[type];
  for (size_t i = 0; i < cores.size(); ++i) {
    Core& c = *cores[round_robin_[type]++ % cores.size()];
    if (c.mailbox.state.load(std::memory_order_relaxed) == kIdle) return c;
  }
  return *cores[0];  // unreachable: at most one block per type is in flight per step
}

void Scheduler::post(Core& core, TaskSlot& task, uint32_t block_idx) {
  core.mailbox.task = &task;
  core.mailbox.block_idx = block_idx;
  core.mailbox.state.store(kAssigned, std::memory_order_release);
}

void Scheduler::execute(Core& core) {
  Mailbox& box = core.mailbox;
  if (box.state.load(std::memory_order_acquire) != kAssigned) return;
  box.state.store(kRunning, std::memory_order_relaxed);  // acknowledge
  TaskSlot& task = *box.task;
  if (!chip_.status.failed()) {  // after an error the remaining tasks are skipped
    core.fault = 0;
    core.context.block_idx = box.block_idx;
    core.context.block_num = task.block_num;
    core.context.core_type = core.type;
    core.context.core_id = core.id;
    core.context.fault = &core.fault;
    core.argv[0] = static_cast<int64_t>(reinterpret_cast<intptr_t>(&core.context));
    std::memcpy(&core.argv[1], task.args, task.arg_count * sizeof(int64_t));
    const bool traced = chip_.record_swimlane.load(std::memory_order_relaxed);
    const int64_t start = traced ? now_ns() : 0;
    task.entry(&core.argv[1]);
    if (traced) {
      events_.push_back(SwimlaneEvent{task.id, task.func_id, box.block_idx, core.type, core.id,
                                      start, now_ns()});
    }
    if (core.fault != 0) {
      chip_.fail(SIMPLER_CHIP_ERR_KERNEL_FAULT,
                 "kernel func_id " + std::to_string(task.func_id) + " (task " +
                     std::to_string(task.id) + ", block " + std::to_string(box.block_idx) +
                     ") on " + core_type_name(core.type) + " core " + std::to_string(core.id) +
                     " reported fault code " + std::to_string(core.fault));
    }
  }
  box.state.store(kDone, std::memory_order_release);  // signal completion
}

void Scheduler::harvest(Core& core) {
  Mailbox& box = core.mailbox;
  if (box.state.load(std::memory_order_acquire) != kDone) return;
  TaskSlot& task = *box.task;
  box.task = nullptr;
  box.state.store(kIdle, std::memory_order_relaxed);
  finished_blocks_.store(finished_blocks_.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
  if (task.block_num == 1 ||
      task.blocks_done.fetch_add(1, std::memory_order_acq_rel) + 1 == task.block_num) {
    complete(task);
  }
}

void Scheduler::complete(TaskSlot& task) {
  Edge* edge = task.fanout.exchange(chip_.closed(), std::memory_order_acq_rel);
  int released = 0;
  while (edge != nullptr) {
    Edge* next = edge->next;  // read before the decrement: the edge may be recycled after it
    TaskSlot* consumer = edge->consumer;
    if (consumer->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      chip_.enqueue_ready(*consumer);
      ++released;
    }
    edge = next;
  }
  const uint64_t id = task.id;
  task.done_id.store(id, std::memory_order_release);  // last touch of the slot
  // The orchestrator may wait for this completion. This thread takes one released task
  // itself; parked schedulers are woken only for the others.
  if (chip_.orchestrator_parker.has_waiters_after_publish() &&
      chip_.awaited_task.load(std::memory_order_relaxed) == id) {
    chip_.orchestrator_parker.wake_all();
  }
  if (released > 1) chip_.scheduler_parker.notify(released - 1);
}

bool Scheduler::has_work() const {
  for (int type = 0; type < kCoreTypeCount; ++type) {
    if (!by_type_[type].empty() && !chip_.ready[type].looks_empty()) return true;
  }
  return false;
}

void Scheduler::idle() {
  Backoff backoff(kSchedulerSpinBudget);
  while (backoff.spin()) {
    if (has_work() || chip_.shutdown.load(std::memory_order_relaxed)) return;
  }
  const uint32_t ticket = chip_.scheduler_parker.prepare_wait();
  if (has_work() || chip_.shutdown.load(std::memory_order_acquire)) {
    chip_.scheduler_parker.cancel_wait();
    return;
  }
  chip_.scheduler_parker.wait(ticket);
}

}  // namespace simpler::rt
