// simpler runtime — an event count for parking idle threads (internal).
//
// Idle threads (schedulers with no ready task, the orchestrator waiting for a completion)
// park here on a futex. Producers of work call notify_*() after publishing it; while
// nobody is parked that is one fence and one load, no system call, so a busy engine
// never pays for wake-ups.
//
// Waiter protocol (no lost wake-ups):
//   uint32_t ticket = parker.prepare_wait();
//   if (work is available) parker.cancel_wait(); else parker.wait(ticket);
#pragma once

#include <atomic>
#include <cstdint>

#include "support/cpu_relax.h"

namespace simpler::rt {

class Parker {
 public:
  uint32_t prepare_wait() {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    store_load_barrier();  // pairs with the one in notify()
    return epoch_.load(std::memory_order_seq_cst);
  }
  void cancel_wait() { sleepers_.fetch_sub(1, std::memory_order_relaxed); }
  // Returns when notified, spuriously, or after timeout_ns (< 0: no timeout).
  void wait(uint32_t ticket, int64_t timeout_ns = -1);

  // Call after publishing work. Wakes at most `count` parked threads.
  void notify(int count) {
    if (has_waiters_after_publish()) wake(count);
  }
  void notify_one() { notify(1); }
  void notify_all() { notify(1 << 30); }
  // For targeted wake-ups: orders the caller's earlier stores before this check, like
  // notify(); the caller then decides whether to wake().
  bool has_waiters_after_publish() {
    store_load_barrier();
    return sleepers_.load(std::memory_order_acquire) > 0;
  }
  void wake(int count);
  void wake_all() { wake(1 << 30); }

 private:
  // Orders the caller's earlier stores before its later loads (Dekker). A fence costs no
  // cache-line traffic; TSan does not model fences, so its builds use a seq_cst RMW on
  // sleepers_ instead (RMWs on one variable are totally ordered: same guarantee).
  void store_load_barrier() {
#if defined(__SANITIZE_THREAD__)
    sleepers_.fetch_add(0, std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  }

  alignas(64) std::atomic<uint32_t> epoch_{0};
  std::atomic<int32_t> sleepers_{0};
};

using support::cpu_relax;

}  // namespace simpler::rt
