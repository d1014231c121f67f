// Bounded spinning before a thread parks: cheap for short waits, never burns a core for long.
#pragma once

#include <chrono>

#include "support/cpu_relax.h"

namespace simpler::sim {

using support::cpu_relax;

// Spins until `ready()` or until `budget` elapsed; returns the last value of ready().
// The clock is read only every 64 iterations (vDSO, no syscall).
template <class Ready>
bool spin_until(Ready&& ready, std::chrono::nanoseconds budget) {
  // Already ready (an executor with work queued, a waiter whose target was reached): no
  // clock read, which costs more than the whole check on some hosts (~50 ns in a VM).
  if (ready()) return true;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if ((i & 63u) == 0 && std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

// How long a parked-to-be thread keeps polling before it blocks.
inline constexpr std::chrono::microseconds kExecutorSpin{30};
inline constexpr std::chrono::microseconds kWaiterSpin{20};

}  // namespace simpler::sim
