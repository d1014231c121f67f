// The immediate run, its inline part: submit's fast path (submit_path.h includes this for
// Orchestrator::submit; the catch-up is out of line, immediate_run.cpp).
//
// With every earlier task completed and reclaimed, the task has no producer to wait for
// (the tensor map is empty), and it completes before submit returns, so no later task
// needs an edge to it and a later add_dependency(before, it) names completed tasks only.
// When the work-first rule would run it on this thread anyway (the next submit would
// release it and run it here), it runs now instead: as a claimed core of its type, under
// the same fault guard and watchdog tracking (run_block), with no window slot, arena
// copy, tensor-map entry, edge, release or reclaim. A chain, or a stream of independent
// tasks, whose tasks are short keeps taking this path.
#pragma once

#include <cstring>

#include "orchestrator.h"

namespace simpler::rt {

// Inline in run_immediately (its only caller): the common answers cost no call.
[[gnu::always_inline]] inline bool Orchestrator::immediate_allowed(const SimplerTaskDesc* d,
                                                                   const LoadedKernel& k) {
  // The run's mode allows it and no scope is open (submit checked immediate_possible: a
  // scope's tasks are pinned, and a scope larger than the window is a ring deadlock,
  // whatever ran when); one block of one core (SPMD and cluster tasks use the queue); no
  // OUT_ALLOC (heap ring).
  if (d->block_num != 1 || d->core_type > SIMPLER_CORE_AIV) {
    return false;
  }
  // Only a kernel with an OUT tensor may get one (k.out_alloc, a per-kernel constant).
  if (k.out_alloc) {
    for (uint32_t i = 0; i < d->tensor_count; ++i) {
      if (d->tensors[i].mode == SIMPLER_TENSOR_OUT_ALLOC) return false;
    }
  }
  if (tail_ == head_ || (reclaim_front(), tail_ == head_)) {
    // take_released_here's common answer, inline: short blocks and no scheduler running
    // any (the mode excludes pipelined runs).
    return (!inline_sense_.shared_blocks() && chip_.working_schedulers() == 0) ||
           take_released_here();
  }
  return catch_up();
}

[[gnu::always_inline]] inline bool Orchestrator::run_immediately(const SimplerTaskDesc* d,
                                                                 SimplerTaskResult* result) {
  // The task's kernel, looked up once (validated: func_id names a loaded kernel).
  const LoadedKernel& k = program_->kernels[d->func_id];
  if (!immediate_allowed(d, k)) return false;
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
  task.entry = k.entry;
  task.arg_count = tc + d->scalar_count;
  task.core_type = d->core_type;
  task.func_id = d->func_id;
  task.id = id;
  task.run = run_;
  const bool keep = !inline_sense_.shared_blocks();  // nothing is queued: nothing in flight
  // always_inline: left to GCC, the block stays a function of its own (a frame, a closure).
  const auto run_block = [&]() __attribute__((always_inline)) {
    return dispatcher_.run_alone(task, argv, keep);
  };
  if (!inline_sense_.run(run_block)) {
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
