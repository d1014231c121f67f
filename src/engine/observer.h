// simpler runtime — observers of a run: what the engine reports while it runs (internal).
//
// As Taskflow's ObserverInterface: the engine calls an observer through one pointer check
// (null: nothing is observed and nothing is paid but that check), so the dispatch loops
// and the submit path read as the algorithm; tracing, profiling and the dependency graph
// are observer implementations (run_diagnostics.h).
#pragma once

#include <cstdint>

namespace simpler::rt {

// One block of a task as it runs on a core.
struct BlockView {
  uint64_t task_id;
  int32_t func_id;
  uint32_t block_idx;
  uint32_t core_type;  // SIMPLER_CORE_AIC / SIMPLER_CORE_AIV
  uint32_t core_id;    // index within its type on the device
};

// A submitted task (the orchestrator's thread).
struct TaskView {
  uint64_t id;
  int32_t func_id;
  uint32_t core_type;
  uint32_t block_num;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;

  // Before the run's first task, on the caller's thread. Blocks run on `lanes` threads;
  // every on_entry/on_exit names its lane (< lanes), and one lane is one thread at a time,
  // so an observer can keep per-lane state without locks.
  virtual void set_up(uint32_t lanes) = 0;
  // Around one kernel block, on the thread (lane) that runs it.
  virtual void on_entry(uint32_t lane, const BlockView& block) = 0;
  virtual void on_exit(uint32_t lane, const BlockView& block) = 0;
  // On the orchestrator's thread: a task was submitted; a dependency was recorded
  // (inferred from the tensor map on a task still in the window, or add_dependency).
  virtual void on_task(const TaskView& task) = 0;
  virtual void on_dependency(uint64_t from, uint64_t to) = 0;
};

}  // namespace simpler::rt
