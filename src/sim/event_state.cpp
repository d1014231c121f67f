#include "event_state.h"

#include "spin_wait.h"

namespace simpler::sim {

void EventState::signal(uint64_t generation) {
  {
    std::lock_guard lock(mutex_);
    if (completed_.load(std::memory_order_relaxed) < generation)
      completed_.store(generation, std::memory_order_release);
  }
  reached_cv_.notify_all();
}

void EventState::wait(uint64_t generation) {
  if (spin_until([&] { return reached(generation); }, kWaiterSpin)) return;
  std::unique_lock lock(mutex_);
  reached_cv_.wait(lock, [&] { return reached(generation); });
}

}  // namespace simpler::sim
