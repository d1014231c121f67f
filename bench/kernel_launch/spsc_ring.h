// The anchor for "how cheap can a handoff be": a bounded lock-free single-producer /
// single-consumer ring. The producer's push is one slot write plus one release store.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace simpler::bench {

// A launch-sized message: what a minimal launch would hand over (callable id + args
// pointer + stream), padded to a cache line.
struct HandoffMessage {
  int64_t callable_id;
  const void* args;
  void* stream;
  uint64_t pad[5];
};

class SpscRing {
 public:
  explicit SpscRing(size_t capacity_pow2) : slots_(capacity_pow2), mask_(capacity_pow2 - 1) {}

  // Producer only. False when full.
  bool try_push(const HandoffMessage& m) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - cached_head_ > mask_) {
      cached_head_ = head_.load(std::memory_order_acquire);
      if (tail - cached_head_ > mask_) return false;
    }
    slots_[tail & mask_] = m;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Consumer only. False when empty.
  bool try_pop(HandoffMessage* out) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return false;
    *out = slots_[head & mask_];
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  uint64_t popped() const { return head_.load(std::memory_order_acquire); }
  uint64_t pushed() const { return tail_.load(std::memory_order_acquire); }

 private:
  std::vector<HandoffMessage> slots_;
  const uint64_t mask_;
  alignas(64) std::atomic<uint64_t> tail_{0};
  uint64_t cached_head_ = 0;  // producer's last view of head_
  alignas(64) std::atomic<uint64_t> head_{0};
};

}  // namespace simpler::bench
