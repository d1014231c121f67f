// simpler runtime — one run's status and completion, shared by its tasks (internal).
//
// Every task points at the RunTrack of the run that submitted it, so an error is latched
// on that run (and skips that run's remaining tasks) even when the orchestration of a
// later, pipelined run already started. A pipelined run (SimplerCallConfig.pipeline_depth
// > 1) is completed by whoever finishes its last task: `remaining` counts its unfinished
// tasks plus one guard that the orchestrator drops when the orchestration returned; the
// thread that takes it to zero calls `on_done` and then clears `busy`. A run that is not
// pipelined is waited for by execute() itself and counts nothing (the hot path pays one
// predictable branch).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "run_status.h"

namespace simpler::rt {

// Called once with the run's final status (0 or a negative chip status) and message.
using RunDone = std::function<void(int status, const std::string& message)>;

struct RunTrack {
  RunStatus status;
  uint64_t first_id = 0;  // engine id of the run's first task
  uint64_t end_id = 0;    // one past its last task, set when the orchestration returned
  bool counted = false;   // pipelined: completion counted per task
  RunDone on_done;
  std::vector<void*> loose;  // scope-less allocations, freed by the orchestrator thread
  // Own cache line: written by every completing task of a pipelined run.
  alignas(64) std::atomic<int64_t> remaining{0};
  // Set from begin_run until on_done returned (or the non-pipelined run finished).
  std::atomic<bool> busy{false};

  // The completing thread of the last task (or the orchestrator dropping its guard).
  void finish() {
    if (on_done) on_done(status.code(), status.message());
    on_done = nullptr;
    busy.store(false, std::memory_order_release);
  }
  // A task of this (counted) run completed.
  void task_done() {
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) finish();
  }
};

}  // namespace simpler::rt
