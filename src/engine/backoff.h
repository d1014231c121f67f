// simpler runtime — bounded spinning before parking (internal).
//
// A waiter first spins on the CPU (the awaited event is usually a few hundred ns
// away), then yields (a thread it waits for may need this CPU: the host may have fewer
// cores than busy threads), and gives up after a time budget so the caller parks.
// Futex wake-ups cost tens of microseconds on small virtual machines, so the budget
// covers the typical gap between tasks of a busy run; an idle engine still parks within
// a fraction of a millisecond.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#include "parker.h"

namespace simpler::rt {

class Backoff {
 public:
  explicit Backoff(std::chrono::nanoseconds budget) : budget_(budget) {}

  // One wait step; false once the budget is spent (time to park).
  bool spin() {
    if (steps_ < kPauseSteps) {
      ++steps_;
      cpu_relax();
      return true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (steps_ == kPauseSteps) {
      ++steps_;
      start_ = now;
    } else if (now - start_ >= budget_) {
      return false;
    }
    std::this_thread::yield();
    return true;
  }

 private:
  static constexpr uint32_t kPauseSteps = 128;
  std::chrono::nanoseconds budget_;
  uint32_t steps_ = 0;
  std::chrono::steady_clock::time_point start_{};
};

// Budgets of the engine's waiters.
inline constexpr std::chrono::microseconds kSchedulerSpinBudget{200};
inline constexpr std::chrono::microseconds kOrchestratorSpinBudget{300};

}  // namespace simpler::rt
