// The immediate run's out-of-line part: a chain one task behind catches up
// (immediate_run.h: the path itself, inline in submit).
#include "immediate_run.h"

namespace simpler::rt {

namespace {
// Queued blocks one submit runs to catch up (the chain's held task's producer, and one
// block of slack, e.g. the last block of an SPMD task before it).
constexpr int kCatchUpBlocks = 2;
}  // namespace

bool Orchestrator::catch_up() {
  // A chain that took the queued path once (behind an SPMD task, or while a scheduler
  // worked) stays one task behind: its latest task held by the guard, that task's producer
  // queued. When this thread would run them anyway (work-first), it catches up here: the
  // queued blocks first (a bounded few), then the held task, so that nothing is in flight.
  if (deferred_ == nullptr || !take_released_here()) return false;
  dispatcher_.let_go();  // a queued block may need the kept core
  for (int i = 0; i < kCatchUpBlocks && deferred_->pending.load(std::memory_order_acquire) != 1 &&
                  chip_.has_ready();
       ++i) {
    if (!inline_sense_.run([this] { return dispatcher_.run_one(); })) return false;
    bump_progress();
  }
  if (deferred_->pending.load(std::memory_order_acquire) != 1 ||
      !chip_.ready[deferred_->core_type].looks_empty() || !release_deferred(/*run_here=*/true)) {
    return false;
  }
  reclaim_front();
  return tail_ == head_;
}

}  // namespace simpler::rt
