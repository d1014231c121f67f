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
// A transfer in flight progresses only while some thread calls into MPI (a large message
// moves in fragments, each needing a test on both sides): its waiters keep testing,
// yielding the core, for up to this long, then fall back to short sleeps.
inline constexpr int64_t kInFlightSpinNs = 100'000'000;

class Backoff {
 public:
  enum class Step { kSpin, kYield, kSleep };

  Backoff(int64_t spin_ns, int64_t min_sleep_ns, int64_t max_sleep_ns)
      : start_(now_ns()),
        pure_until_(start_ + (spin_ns < kPureSpinNs ? spin_ns : kPureSpinNs)),
        spin_until_(start_ + spin_ns),
        sleep_ns_(min_sleep_ns),
        max_sleep_ns_(max_sleep_ns) {}

  // One idle step: spin, then yield, while within the spin window; else sleep (longer
  // next time).
  Step pause() {
    const int64_t now = now_ns();
    if (now < pure_until_) {
      support::cpu_relax();
      return Step::kSpin;
    }
    if (now < spin_until_) {
      sched_yield();
      return Step::kYield;
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(sleep_ns_));
    sleep_ns_ = sleep_ns_ * 2 > max_sleep_ns_ ? max_sleep_ns_ : sleep_ns_ * 2;
    return Step::kSleep;
  }

  int64_t started() const { return start_; }

 private:
  int64_t start_;
  int64_t pure_until_;
  int64_t spin_until_;
  int64_t sleep_ns_;
  int64_t max_sleep_ns_;
};

// How a request's caller awaits its data transfer and its reply (Call::wait). While the
// data is in flight it yields between tests (see kInFlightSpinNs). Once the data moved,
// the reply is microseconds away (the peer answers as soon as its end completed), so the
// spin window starts again: a 16 MiB copy outlasts the first window, and the sleep it
// then fell into (10 us asked, ~60 us or more taken) cost a third of its time.
class CallWait {
 public:
  CallWait(int64_t spin_ns, bool data_in_flight, int64_t min_sleep_ns, int64_t max_sleep_ns)
      : spin_ns_(spin_ns),
        min_sleep_ns_(min_sleep_ns),
        max_sleep_ns_(max_sleep_ns),
        in_flight_(data_in_flight),
        backoff_(spin_ns, min_sleep_ns, max_sleep_ns) {}

  // One idle step; `moved`: the data transfer (if any) has completed.
  Backoff::Step pause(bool moved) {
    if (in_flight_ && moved) {
      in_flight_ = false;
      backoff_ = Backoff(spin_ns_, min_sleep_ns_, max_sleep_ns_);
    }
    if (in_flight_) {
      const int64_t waited = now_ns() - backoff_.started();
      if (waited > kPureSpinNs && waited < kInFlightSpinNs) {
        sched_yield();
        return Backoff::Step::kYield;
      }
    }
    return backoff_.pause();
  }

 private:
  int64_t spin_ns_;
  int64_t min_sleep_ns_;
  int64_t max_sleep_ns_;
  bool in_flight_;
  Backoff backoff_;
};

}  // namespace simpler::mpi
