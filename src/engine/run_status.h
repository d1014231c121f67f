// simpler runtime — the latched first error of a run (internal).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace simpler::rt {

class RunStatus {
 public:
  // Latches `code` with `message` if nothing is latched yet. True if this call won.
  bool latch(int32_t code, const std::string& message) {
    int32_t expected = 0;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!code_.compare_exchange_strong(expected, code, std::memory_order_acq_rel)) return false;
    message_ = message;
    return true;
  }
  int32_t code() const { return code_.load(std::memory_order_acquire); }
  bool failed() const { return code_.load(std::memory_order_relaxed) != 0; }
  std::string message() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return message_;
  }
  // Only between runs.
  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    code_.store(0, std::memory_order_release);
    message_.clear();
  }

 private:
  std::atomic<int32_t> code_{0};
  mutable std::mutex mutex_;
  std::string message_;
};

}  // namespace simpler::rt
