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

bool Orchestrator::immediate_allowed(const SimplerTaskDesc* d) {
  // TMR with one run in flight; no dependency graph recorded (it would miss the edges to
  // tasks completed this way); no open scope (its tasks are pinned, and a scope larger
  // than the window is a ring deadlock, whatever ran when); one block of one core (SPMD
  // and cluster tasks use the queue); no OUT_ALLOC (heap ring).
  if (options_.build_graph_first || options_.pipeline_depth != 1 ||
      options_.observer != nullptr || !scopes_.empty() || d->block_num != 1 ||
      d->core_type > SIMPLER_CORE_AIV) {
    return false;
  }
  for (uint32_t i = 0; i < d->tensor_count; ++i) {
    if (d->tensors[i].mode == SIMPLER_TENSOR_OUT_ALLOC) return false;
  }
  reclaim_front();
  return tail_ == head_ && take_released_here();
}

bool Orchestrator::run_immediately(const SimplerTaskDesc* d, SimplerTaskResult* result) {
  if (!immediate_allowed(d)) return false;
  // The kernel gets its own copy of the descriptors, as from the arena: what it does to
  // them never reaches the caller's desc.
  const uint32_t tc = d->tensor_count;
  for (uint32_t i = 0; i < tc; ++i) {
    immediate_tensors_[i] = d->tensors[i].tensor;
    immediate_argv_[i] = static_cast<int64_t>(reinterpret_cast<intptr_t>(&immediate_tensors_[i]));
  }
  if (d->scalar_count != 0) {
    std::memcpy(immediate_argv_ + tc, d->scalars, d->scalar_count * sizeof(uint64_t));
  }
  const uint64_t id = head_;
  TaskSlot& task = immediate_;
  task.entry = program_->kernels[d->func_id].entry;
  task.args = immediate_argv_;
  task.arg_count = tc + d->scalar_count;
  task.block_num = 1;
  task.core_type = d->core_type;
  task.func_id = d->func_id;
  task.id = id;
  task.run = run_;
  const bool keep = !inline_sense_.shared_blocks();  // nothing is queued: nothing in flight
  if (!inline_sense_.run([&] { return dispatcher_.run_alone(task, keep); })) {
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
