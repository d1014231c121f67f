// Which ranks are alive: the last time each was heard from, and the ranks declared dead.
// A rank not heard from for rank_timeout seconds is declared dead once and stays dead, so
// every waiter on it fails in bounded time (never a hang) with the same reason.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace simpler::mpi {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Liveness {
 public:
  Liveness(int size, double rank_timeout)
      : timeout_ns_(static_cast<int64_t>(rank_timeout * 1e9)),
        last_seen_(std::make_unique<std::atomic<int64_t>[]>(static_cast<size_t>(size))),
        dead_(static_cast<size_t>(size)),
        size_(size) {
    const int64_t now = now_ns();
    for (int r = 0; r < size; ++r) last_seen_[static_cast<size_t>(r)].store(now);
  }

  void saw(int rank) {
    if (rank >= 0 && rank < size_) last_seen_[static_cast<size_t>(rank)].store(now_ns());
  }

  // Seconds since the rank was last heard from.
  double silent(int rank) const {
    return static_cast<double>(now_ns() - last_seen_[static_cast<size_t>(rank)].load()) * 1e-9;
  }

  // False once the rank is dead (declaring it dead now if it has been silent too long).
  bool alive(int rank) {
    if (rank < 0 || rank >= size_) return true;
    if (dead_flag(rank)) return false;
    if (now_ns() - last_seen_[static_cast<size_t>(rank)].load() <= timeout_ns_) return true;
    std::lock_guard<std::mutex> lock(mutex_);
    if (dead_[static_cast<size_t>(rank)].empty()) {
      dead_[static_cast<size_t>(rank)] = "silent for more than rank_timeout";
      any_dead_.store(true);
    }
    return false;
  }

  // The reason a rank was declared dead ("" while alive).
  std::string reason(int rank) {
    std::lock_guard<std::mutex> lock(mutex_);
    return dead_[static_cast<size_t>(rank)];
  }

  void declare_dead(int rank, const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (dead_[static_cast<size_t>(rank)].empty()) dead_[static_cast<size_t>(rank)] = why;
    any_dead_.store(true);
  }

 private:
  bool dead_flag(int rank) {
    if (!any_dead_.load()) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    return !dead_[static_cast<size_t>(rank)].empty();
  }

  int64_t timeout_ns_;
  std::unique_ptr<std::atomic<int64_t>[]> last_seen_;
  std::mutex mutex_;
  std::vector<std::string> dead_;
  std::atomic<bool> any_dead_{false};
  int size_;
};

}  // namespace simpler::mpi
