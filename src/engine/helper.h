// simpler runtime — the orchestrator's helping path (internal).
//
// When the orchestrator has to wait (a ring is full, a value is read, the run ends), it
// executes ready blocks itself instead of handing every task to a scheduler thread, as
// libgomp's task-creating thread does: pop a block from a ready queue, borrow an idle core
// of that type (ChipState::claim_core: the core's scheduler cannot post into it meanwhile),
// run the kernel with that core's SimplerKernelContext, complete the task. On a small host
// this saves two cross-thread hand-offs (and often a futex wake-up) per task.
#pragma once

#include <cstdint>

#include "block_runner.h"
#include "chip_state.h"

namespace simpler::rt {

class Helper {
 public:
  explicit Helper(ChipState& chip) : chip_(chip) {}

  // Runs one ready block of either core type as a borrowed idle core. False when no ready
  // block could be taken (queues empty, or every core of the type is busy).
  bool run_one();

  // The helper runs on the caller of Engine::execute: observer lane 0 (observer.h).
  static constexpr uint32_t kLane = 0;

  void begin_run() { blocks_ = 0; }
  uint64_t blocks() const { return blocks_; }  // blocks this run executed by the helper

 private:
  bool run_one(uint32_t type);
  bool borrow_core(uint32_t type, uint32_t* id);

  ChipState& chip_;
  uint32_t next_type_ = 0;
  uint32_t next_core_[kCoreTypeCount] = {0, 0};
  uint64_t blocks_ = 0;
};

}  // namespace simpler::rt
