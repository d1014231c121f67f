// simpler runtime — a scheduler thread and the simulated cores it owns (internal).
//
// Each scheduler owns whole clusters (1 AIC + 2 AIV cores each). Per iteration it takes
// at most one ready block per core type from the shared ready queues, posts it into the
// mailbox of one of its idle cores of that type, lets the core run it (the core
// acknowledges, runs the kernel, signals completion in its mailbox), then harvests the
// finished mailboxes: a task whose last block finished completes and releases its
// dependents. The cores are executed by the scheduler thread itself, so dozens of
// simulated cores cost no extra OS threads and no hand-off latency on a small host.
// With nothing to dispatch it spins briefly, then parks on ChipState::scheduler_parker.
// A core is claimed (ChipState::claim_core) while its mailbox holds a block: the
// orchestrator's helping path may borrow an unclaimed core of this scheduler meanwhile.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "block_runner.h"
#include "chip_state.h"
#include "simpler/abi/chip_types.h"
#include "simpler/kernel/kernel_abi.h"

namespace simpler::rt {

class Scheduler {
 public:
  // Owns clusters [first_cluster, first_cluster + cluster_count); `lane` names its thread
  // to the run's observer (observer.h; lane 0 is the caller of Engine::execute).
  Scheduler(ChipState& chip, uint32_t lane, int32_t first_cluster, int32_t cluster_count);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void run();  // the thread body; returns once chip.shutdown is set

  // Blocks finished so far (watchdog progress); any thread.
  uint64_t progress() const { return finished_blocks_.load(std::memory_order_relaxed); }

 private:
  enum MailboxState : uint32_t { kIdle = 0, kAssigned = 1, kRunning = 2, kDone = 3 };
  struct Mailbox {
    TaskSlot* task = nullptr;
    uint32_t block_idx = 0;
    std::atomic<uint32_t> state{kIdle};
  };
  struct Core {
    uint32_t type = 0;
    uint32_t id = 0;  // index within its type on the device
    Mailbox mailbox;
  };

  bool step();
  Core* claim_idle_core(uint32_t type);  // nullptr: every core of the type is claimed
  void post(Core& core, TaskSlot& task, uint32_t block_idx);
  void execute(Core& core);  // what the core does with its mailbox
  void harvest(Core& core);
  bool has_work() const;
  void idle();

  ChipState& chip_;
  uint32_t lane_;
  std::unique_ptr<Core[]> cores_;
  std::vector<Core*> by_type_[kCoreTypeCount];
  uint32_t round_robin_[kCoreTypeCount] = {0, 0};
  uint32_t first_type_ = 0;
  std::atomic<uint64_t> finished_blocks_{0};
};

}  // namespace simpler::rt
