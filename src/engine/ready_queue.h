// simpler runtime — a bounded lock-free MPMC queue of ready tasks (internal).
//
// One queue per core type. Producers: the orchestrator (a task with no pending
// dependency) and the schedulers (completion released a dependent, or an SPMD task still
// has blocks to hand out). Consumers: the schedulers. A task sits in at most one queue
// once at a time and every queued task holds a window slot, so a capacity of the task
// window size can never overflow. Sequence-numbered cells (D. Vyukov's design): no
// locks, no allocation after reset().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace simpler::rt {

template <typename T>
class ReadyQueue {
 public:
  // capacity: a power of two. Not thread-safe; call while no thread uses the queue.
  void reset(uint64_t capacity) {
    cells_ = std::make_unique<Cell[]>(capacity);
    mask_ = capacity - 1;
    for (uint64_t i = 0; i < capacity; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
    enqueue_pos_.store(0, std::memory_order_relaxed);
    dequeue_pos_.store(0, std::memory_order_relaxed);
  }

  // False only if full (a broken invariant: see the header comment).
  bool push(T* item) {
    uint64_t pos = enqueue_pos_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      const uint64_t seq = cell.seq.load(std::memory_order_acquire);
      const int64_t diff = static_cast<int64_t>(seq - pos);
      if (diff == 0) {
        if (enqueue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.item = item;
          cell.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = enqueue_pos_.load(std::memory_order_relaxed);
      }
    }
  }

  T* try_pop() {
    uint64_t pos = dequeue_pos_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      const uint64_t seq = cell.seq.load(std::memory_order_acquire);
      const int64_t diff = static_cast<int64_t>(seq - (pos + 1));
      if (diff == 0) {
        if (dequeue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          T* item = cell.item;
          cell.seq.store(pos + mask_ + 1, std::memory_order_release);
          return item;
        }
      } else if (diff < 0) {
        return nullptr;
      } else {
        pos = dequeue_pos_.load(std::memory_order_relaxed);
      }
    }
  }

  // Queued items now; a hint like looks_empty().
  uint64_t size_hint() const {
    const uint64_t enq = enqueue_pos_.load(std::memory_order_acquire);
    const uint64_t deq = dequeue_pos_.load(std::memory_order_acquire);
    return enq > deq ? enq - deq : 0;
  }

  // A hint for idle checks: may be stale by the time the caller acts on it.
  bool looks_empty() const {
    return enqueue_pos_.load(std::memory_order_acquire) ==
           dequeue_pos_.load(std::memory_order_acquire);
  }

 private:
  struct Cell {
    std::atomic<uint64_t> seq{0};
    T* item = nullptr;
  };
  std::unique_ptr<Cell[]> cells_;
  uint64_t mask_ = 0;
  alignas(64) std::atomic<uint64_t> enqueue_pos_{0};
  alignas(64) std::atomic<uint64_t> dequeue_pos_{0};
};

}  // namespace simpler::rt
