// The scheduler loop: the dispatch loop while awake, park when idle.
#include "scheduler.h"

#include <array>

#include "backoff.h"
#include "engine_defaults.h"
#include "support/clock.h"

namespace simpler::rt {
namespace {

std::array<uint32_t, kCoreTypeCount> first_cores(int32_t cluster) {
  // A cluster is 1 AIC + 2 AIV cores (ChipState::init_cores numbering).
  return {static_cast<uint32_t>(cluster), 2 * static_cast<uint32_t>(cluster)};
}

}  // namespace

Scheduler::Scheduler(ChipState& chip, uint32_t lane, int32_t first_cluster,
                     std::chrono::nanoseconds spin_budget)
    : chip_(chip), dispatcher_(chip, lane, first_cores(first_cluster)), spin_budget_(spin_budget) {}

void Scheduler::run() {
  while (!chip_.shutdown.load(std::memory_order_acquire)) {
    if (!chip_.try_enter_awake()) {
      park();
      continue;
    }
    if (!dispatch_until_idle()) chip_.leave_awake();
    park();
  }
}

// Runs blocks while there are any, then spins within one budget and returns to park. Ready
// work it cannot take (every core of the type claimed, a push still in progress) spends
// the same budget: it pauses and yields instead of looping hot, so the thread that holds
// the cores (or is inside the push) gets this hardware thread.
bool Scheduler::dispatch_until_idle() {
  Backoff backoff(spin_budget_);
  bool idle = false;
  bool left = false;
  for (;;) {
    if (dispatcher_.run_one()) {
      if (idle) {
        idle = false;
        chip_.idle.fetch_sub(1, std::memory_order_relaxed);
        backoff = Backoff(spin_budget_);
      }
      continue;
    }
    // Looking for work, with a CPU: stamped before it counts as idle, so that a spinner
    // that just began does not read as stalled (ChipState::spinners_stalled).
    chip_.spinner_looks(support::steady_now_ns());
    if (!idle) {
      // Spinning, not working: the orchestrator does not count on this thread for short
      // blocks (Orchestrator::inline_now).
      idle = true;
      chip_.idle.fetch_add(1, std::memory_order_relaxed);
    }
    // Over the budget (it shrank under this thread: the orchestrating thread came back),
    // out of work: it leaves now instead of spinning beside the others.
    if (chip_.shutdown.load(std::memory_order_relaxed) || (left = chip_.leave_if_over_budget()) ||
        !backoff.spin()) {
      break;
    }
  }
  chip_.idle.fetch_sub(1, std::memory_order_relaxed);
  return left;
}

void Scheduler::park() {
  const uint32_t ticket = chip_.scheduler_parker.prepare_wait();
  // Work nobody awake will take: do not sleep on it (the publisher saw us as awake).
  if (chip_.shutdown.load(std::memory_order_acquire) || (chip_.has_ready() && chip_.awake_room())) {
    chip_.scheduler_parker.cancel_wait();
    return;
  }
  chip_.scheduler_parker.wait(ticket);
}

}  // namespace simpler::rt
