// simpler runtime host — one message written asynchronously: the latest kernel-mode launch
// that failed on the chip (a device job, so no C ABI call owns it; per-call errors go to
// the calling thread's last error instead). Guarded by its own mutex so a device job
// never waits for an entry.
#pragma once

#include <mutex>
#include <string>

namespace simpler::rt::host {

class ErrorSlot {
 public:
  void set(std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    message_ = std::move(message);
  }
  std::string get() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return message_;
  }

 private:
  mutable std::mutex mutex_;
  std::string message_;
};

}  // namespace simpler::rt::host
