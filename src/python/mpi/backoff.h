// Waiting without burning a core: a short bounded spin (yielding the core to anyone who
// wants it), then sleeps that double up to a ceiling. The machines this runs on may have
// fewer cores than busy threads (several ranks per host under --oversubscribe), so no
// waiter here ever spins unboundedly.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "liveness.h"

namespace simpler::mpi {

class Backoff {
 public:
  Backoff(int64_t spin_ns, int64_t min_sleep_ns, int64_t max_sleep_ns)
      : spin_until_(now_ns() + spin_ns), sleep_ns_(min_sleep_ns), max_sleep_ns_(max_sleep_ns) {}

  // One idle step: yield while within the spin window, else sleep (and sleep longer next).
  void pause() {
    if (now_ns() < spin_until_) {
      sched_yield();
      return;
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(sleep_ns_));
    sleep_ns_ = sleep_ns_ * 2 > max_sleep_ns_ ? max_sleep_ns_ : sleep_ns_ * 2;
  }

 private:
  int64_t spin_until_;
  int64_t sleep_ns_;
  int64_t max_sleep_ns_;
};

}  // namespace simpler::mpi
