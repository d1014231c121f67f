// simpler runtime — a scheduler thread (internal).
//
// A scheduler runs the one dispatch loop (dispatcher.h) until shutdown: take a ready
// block, run it as an idle core of its type, complete it. The simulated cores are
// executed by the scheduler thread itself, so dozens of cores cost no extra OS threads
// and no hand-off latency. Each scheduler starts its core search at the clusters it was
// given, so schedulers spread over the chip, but any idle core of the right type will do.
//
// No more runnable threads than hardware threads: at most ChipState::max_awake
// schedulers are awake (running or spinning) at once; the others stay parked on
// ChipState::scheduler_parker, and a scheduler that finds no work spins briefly (counted
// in ChipState::idle meanwhile), gives its awake slot back and parks.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "backoff.h"

#include "chip_state.h"
#include "dispatcher.h"

namespace simpler::rt {

class Scheduler {
 public:
  // Starts its core search at cluster `first_cluster`; `lane` names its thread to the
  // run's observer (observer.h; lane 0 is the caller of Engine::execute).
  // `spin_budget`: how long it spins for work before it parks (tests lengthen it).
  Scheduler(ChipState& chip, uint32_t lane, int32_t first_cluster,
            std::chrono::nanoseconds spin_budget = kSchedulerSpinBudget);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void run();  // the thread body; returns once chip.shutdown is set

  // Blocks finished so far (watchdog progress); any thread.
  uint64_t progress() const { return dispatcher_.blocks(); }

 private:
  // The dispatch loop while awake; returns to park. True when it already gave its awake
  // slot back (it was over the budget).
  bool dispatch_until_idle();
  void park();

  ChipState& chip_;
  Dispatcher dispatcher_;
  std::chrono::nanoseconds spin_budget_;
};

}  // namespace simpler::rt
