// simpler runtime — which block each simulated core is running, for the watchdog's
// message (internal).
//
// Written by the thread that runs a block (a scheduler, or the helping orchestrator)
// just before and after the kernel call, only while the run has a watchdog (a relaxed
// flag load otherwise); read by the waiting thread when the watchdog fires, to name the
// task, kernel and core that ran longest. Also whether the orchestration itself is
// inside user code, and since when: time a runtime thread spends waiting to be scheduled
// (a loaded machine) is nobody's stall, so the watchdog blames only what is running.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace simpler::rt {

struct RunningBlock {
  std::atomic<uint64_t> task_id{0};  // 0: the core runs nothing
  std::atomic<int32_t> func_id{0};
  std::atomic<uint32_t> block_idx{0};
  std::atomic<int64_t> start_ns{0};  // steady clock
};

struct RunningBlocks {
  std::atomic<bool> tracking{false};         // the current run has a watchdog
  std::unique_ptr<RunningBlock[]> cores[2];  // per core type, indexed by core id
  // steady ns at which the run's orchestration function was entered; 0 outside it.
  std::atomic<int64_t> orchestration_since_ns{0};
  uint32_t count[2] = {0, 0};

  void init(uint32_t aic, uint32_t aiv) {
    count[0] = aic;
    count[1] = aiv;
    cores[0] = std::make_unique<RunningBlock[]>(aic);
    cores[1] = std::make_unique<RunningBlock[]>(aiv);
  }
  void enter(uint32_t type, uint32_t core, uint64_t task_id, int32_t func_id, uint32_t block,
             int64_t now_ns) {
    RunningBlock& b = cores[type][core];
    b.func_id.store(func_id, std::memory_order_relaxed);
    b.block_idx.store(block, std::memory_order_relaxed);
    b.start_ns.store(now_ns, std::memory_order_relaxed);
    b.task_id.store(task_id, std::memory_order_release);
  }
  void leave(uint32_t type, uint32_t core) {
    cores[type][core].task_id.store(0, std::memory_order_release);
  }
  void orchestration_enter(int64_t now_ns) {
    orchestration_since_ns.store(now_ns, std::memory_order_release);
  }
  void orchestration_leave() { orchestration_since_ns.store(0, std::memory_order_release); }
};

}  // namespace simpler::rt
