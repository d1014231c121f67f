// Host buffers for the collectives' copies of device memory (collective.h), kept for reuse:
// a fresh allocation of a large buffer is a fresh mapping whose every page faults on first
// touch (on this VM about 1 ms per MiB copied in and out), once per collective otherwise.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace simpler::mpi {

class StagingPool {
 public:
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t size = 0;
  };

  // A buffer of at least n bytes (never null).
  Buffer take(size_t n) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      size_t best = free_.size();
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].size >= n && (best == free_.size() || free_[i].size < free_[best].size))
          best = i;
      }
      if (best != free_.size()) {
        Buffer b = std::move(free_[best]);
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
        return b;
      }
    }
    const size_t size = n == 0 ? 1 : n;
    return Buffer{std::unique_ptr<char[]>(new char[size]), size};
  }

  // Back for reuse; the pool keeps its kKeep largest buffers.
  void give(Buffer b) {
    if (!b.data) return;
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(b));
    if (free_.size() > kKeep) {
      size_t smallest = 0;
      for (size_t i = 1; i < free_.size(); ++i) {
        if (free_[i].size < free_[smallest].size) smallest = i;
      }
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(smallest));
    }
  }

 private:
  static constexpr size_t kKeep = 4;  // an all-to-all's input and output, two in flight
  std::mutex mutex_;
  std::vector<Buffer> free_;
};

}  // namespace simpler::mpi
