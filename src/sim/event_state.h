// An event: a generation counter bumped by every record (at enqueue time) and a
// completed generation advanced when a recorded point is reached on its stream.
// "Complete" means completed >= the latest record; an unrecorded event is complete.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace simpler::sim {

class EventState {
 public:
  explicit EventState(int32_t device) : device_(device) {}

  int32_t device() const { return device_; }

  // The generation a new record will signal.
  uint64_t next_generation() { return recorded_.fetch_add(1, std::memory_order_acq_rel) + 1; }
  uint64_t latest_generation() const { return recorded_.load(std::memory_order_acquire); }

  bool reached(uint64_t generation) const {
    return completed_.load(std::memory_order_acquire) >= generation;
  }
  bool complete() const { return reached(latest_generation()); }

  // Marks `generation` (and every earlier one) reached and wakes the waiters.
  void signal(uint64_t generation);
  // Blocks (bounded spin, then condition variable) until `generation` is reached.
  void wait(uint64_t generation);

 private:
  const int32_t device_;
  std::atomic<uint64_t> recorded_{0};
  std::atomic<uint64_t> completed_{0};
  std::mutex mutex_;
  std::condition_variable reached_cv_;
};

}  // namespace simpler::sim
