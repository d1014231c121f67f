// The scheduler loop: the dispatch loop while awake, park when idle.
#include "scheduler.h"

#include <array>

#include "backoff.h"
#include "engine_defaults.h"

namespace simpler::rt {
namespace {

std::array<uint32_t, kCoreTypeCount> first_cores(int32_t cluster) {
  // A cluster is 1 AIC + 2 AIV cores (ChipState::init_cores numbering).
  return {static_cast<uint32_t>(cluster), 2 * static_cast<uint32_t>(cluster)};
}

}  // namespace

Scheduler::Scheduler(ChipState& chip, uint32_t lane, int32_t first_cluster)
    : chip_(chip), dispatcher_(chip, lane, first_cores(first_cluster)) {}

void Scheduler::run() {
  while (!chip_.shutdown.load(std::memory_order_acquire)) {
    if (!chip_.try_enter_awake()) {
      park();
      continue;
    }
    for (;;) {
      if (dispatcher_.run_one()) continue;
      if (!spin_for_work()) break;
    }
    chip_.leave_awake();
    park();
  }
}

bool Scheduler::spin_for_work() {
  Backoff backoff(kSchedulerSpinBudget);
  while (backoff.spin()) {
    if (chip_.has_ready()) return true;
    if (chip_.shutdown.load(std::memory_order_relaxed)) return false;
  }
  return false;
}

void Scheduler::park() {
  const uint32_t ticket = chip_.scheduler_parker.prepare_wait();
  // Work nobody awake will take: do not sleep on it (the publisher saw us as awake).
  if (chip_.shutdown.load(std::memory_order_acquire) ||
      (chip_.has_ready() && chip_.awake_schedulers() < chip_.max_awake)) {
    chip_.scheduler_parker.cancel_wait();
    return;
  }
  chip_.scheduler_parker.wait(ticket);
}

}  // namespace simpler::rt
