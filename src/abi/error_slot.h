// simpler runtime host — the last error message of one context.
//
// Written by entries that fail and by device jobs whose run failed, read through
// simpler_last_error. Guarded by its own mutex so a device job never waits for an entry.
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
