// Waiting without burning a core: a short bounded spin, then sleeps that double up to a
// ceiling. The spin is pure (the CPU's pause hint) for its first kPureSpinNs — a reply
// due within microseconds is seen at once — and yields the core for the rest of the
// window (a system call each, which costs microseconds on a paravirtualized VM, but lets
// another busy thread run). The machines this runs on may have fewer cores than busy
// threads (several ranks per host under --oversubscribe), so no waiter here ever spins
// unboundedly.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "liveness.h"
#include "support/cpu_relax.h"

namespace simpler::mpi {

inline constexpr int64_t kPureSpinNs = 50'000;

class Backoff {
 public:
  Backoff(int64_t spin_ns, int64_t min_sleep_ns, int64_t max_sleep_ns)
      : start_(now_ns()),
        pure_until_(start_ + (spin_ns < kPureSpinNs ? spin_ns : kPureSpinNs)),
        spin_until_(start_ + spin_ns),
        sleep_ns_(min_sleep_ns),
        max_sleep_ns_(max_sleep_ns) {}

  // One idle step: spin, then yield, while within the spin window; else sleep (longer
  // next time).
  void pause() {
    const int64_t now = now_ns();
    if (now < pure_until_) {
      support::cpu_relax();
      return;
    }
    if (now < spin_until_) {
      sched_yield();
      return;
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(sleep_ns_));
    sleep_ns_ = sleep_ns_ * 2 > max_sleep_ns_ ? max_sleep_ns_ : sleep_ns_ * 2;
  }

  int64_t started() const { return start_; }

 private:
  int64_t start_;
  int64_t pure_until_;
  int64_t spin_until_;
  int64_t sleep_ns_;
  int64_t max_sleep_ns_;
};

}  // namespace simpler::mpi
