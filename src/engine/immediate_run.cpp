// The immediate run: a task submitted while no task is in flight runs at submit.
//
// With every earlier task completed and reclaimed, the task has no producer to wait for
// (the tensor map is empty), and it completes before submit returns, so no later task
// needs an edge to it and a later add_dependency(before, it) names completed tasks only.
// When the work-first rule would run it on this thread anyway (the next submit would
// release it and run it here), it runs now instead: as a claimed core of its type, under
// the same fault guard and watchdog tracking (run_block), with no window slot, arena
// copy, tensor-map entry, edge, release or reclaim. A chain, or a stream of independent
// tasks, whose tasks are short keeps taking this path.
#include <cstring>

#include "orchestrator.h"

namespace simpler::rt {

namespace {
// Queued blocks one submit runs to catch up (the chain's held task's producer, and one
// block of slack, e.g. the last block of an SPMD task before it).
constexpr int kCatchUpBlocks = 2;
}  // namespace

// Inline in run_immediately (its only caller): the common answers cost no call.
[[gnu::always_inline]] inline bool Orchestrator::immediate_allowed(const SimplerTaskDesc* d) {
  // The run's mode allows it (begin_run); no open scope (its tasks are pinned, and a
  // scope larger than the window is a ring deadlock, whatever ran when); one block of one
  // core (SPMD and cluster tasks use the queue); no OUT_ALLOC (heap ring).
  if (!immediate_possible() || d->block_num != 1 || d->core_type > SIMPLER_CORE_AIV) {
    return false;
  }
  for (uint32_t i = 0; i < d->tensor_count; ++i) {
    if (d->tensors[i].mode == SIMPLER_TENSOR_OUT_ALLOC) return false;
  }
  if (tail_ == head_ || (reclaim_front(), tail_ == head_)) return take_released_here();
  return catch_up();
}

bool Orchestrator::catch_up() {
  // A chain that took the queued path once (behind an SPMD task, or while a scheduler
  // worked) stays one task behind: its latest task held by the guard, that task's producer
  // queued. When this thread would run them anyway (work-first), it catches up here: the
  // queued blocks first (a bounded few), then the held task, so that nothing is in flight.
  if (deferred_ == nullptr || !take_released_here()) return false;
  dispatcher_.let_go();  // a queued block may need the kept core
  for (int i = 0; i < kCatchUpBlocks && deferred_->pending.load(std::memory_order_acquire) != 1 &&
                  chip_.has_ready();
       ++i) {
    if (!inline_sense_.run([this] { return dispatcher_.run_one(); })) return false;
    bump_progress();
  }
  if (deferred_->pending.load(std::memory_order_acquire) != 1 ||
      !chip_.ready[deferred_->core_type].looks_empty() || !release_deferred(/*run_here=*/true)) {
    return false;
  }
  reclaim_front();
  return tail_ == head_;
}

bool Orchestrator::run_immediately(const SimplerTaskDesc* d, SimplerTaskResult* result) {
  if (!immediate_allowed(d)) return false;
  // The kernel gets its own copy of the descriptors, as from the arena: what it does to
  // them never reaches the caller's desc. Its argument vector is built here, where the
  // block runs it (argv[0]: the block's context), and again for every task: the kernel
  // may have written to it.
  const uint32_t tc = d->tensor_count;
  int64_t* const argv = immediate_argv_;
  for (uint32_t i = 0; i < tc; ++i) {
    immediate_tensors_[i] = d->tensors[i].tensor;
    argv[1 + i] = static_cast<int64_t>(reinterpret_cast<intptr_t>(&immediate_tensors_[i]));
  }
  if (d->scalar_count != 0) {
    std::memcpy(argv + 1 + tc, d->scalars, d->scalar_count * sizeof(uint64_t));
  }
  const uint64_t id = head_;
  TaskSlot& task = immediate_;  // task.args: unused (argv); block_num: 1 (the constructor)
  task.entry = program_->kernels[d->func_id].entry;
  task.arg_count = tc + d->scalar_count;
  task.core_type = d->core_type;
  task.func_id = d->func_id;
  task.id = id;
  task.run = run_;
  const bool keep = !inline_sense_.shared_blocks();  // nothing is queued: nothing in flight
  if (!inline_sense_.run([&] { return dispatcher_.run_alone(task, argv, keep); })) {
    task.id = 0;  // not run (no idle core): the queued path takes this id
    return false;
  }
  head_ = tail_ = done_cursor_ = id + 1;
  bump_progress();
  if (result != nullptr) {
    result->task_id = id - run_first_;
    result->output_count = 0;
  }
  return true;
}

}  // namespace simpler::rt
