// Host buffers for the collectives' copies of device memory (collective.h), kept for reuse:
// a fresh allocation of a large buffer is a fresh mapping whose every page faults on first
// touch (on this VM about 1 ms per MiB copied in and out), once per collective otherwise.
// Each buffer is its own anonymous mapping: a large one asks for 2 MiB pages, as the sim's
// device arena does (Open MPI's single-copy transport pins and walks the peer's pages one
// by one, ~3x slower on 4 KiB pages), and an abandoned collective's buffers can give their
// memory back while staying mapped (release_pages).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "support/huge_pages.h"

namespace simpler::mpi {

class StagingPool {
 public:
  // One mapping; movable, unmapped when destroyed.
  class Buffer {
   public:
    Buffer() = default;
    explicit Buffer(size_t n) : size_(round_up(n == 0 ? 1 : n)) {
      void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      data_ = static_cast<char*>(p);
      if (size_ >= support::kHugePageHintBytes) support::advise_huge_pages(data_, size_);
    }
    Buffer(Buffer&& o) noexcept
        : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    Buffer& operator=(Buffer&& o) noexcept {
      if (this != &o) {
        unmap();
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
      }
      return *this;
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { unmap(); }

    char* data() const { return data_; }
    size_t size() const { return size_; }
    explicit operator bool() const { return data_ != nullptr; }
    // Gives the pages back to the system; the range stays mapped (reads as zeros, a write
    // faults a fresh page in), so MPI may still touch it safely.
    void release_pages() {
      if (data_ != nullptr) (void)madvise(data_, size_, MADV_DONTNEED);
    }

   private:
    static constexpr size_t kPage = 4096;
    static size_t round_up(size_t n) { return (n + kPage - 1) / kPage * kPage; }
    void unmap() {
      if (data_ != nullptr) (void)munmap(data_, size_);
      data_ = nullptr;
    }
    char* data_ = nullptr;
    size_t size_ = 0;
  };

  // A buffer of at least n bytes (never null).
  Buffer take(size_t n) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      size_t best = free_.size();
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].size() >= n && (best == free_.size() || free_[i].size() < free_[best].size()))
          best = i;
      }
      if (best != free_.size()) {
        Buffer b = std::move(free_[best]);
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
        return b;
      }
    }
    return Buffer(n);
  }

  // Back for reuse; the pool keeps its kKeep largest buffers.
  void give(Buffer b) {
    if (!b) return;
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(b));
    if (free_.size() > kKeep) {
      size_t smallest = 0;
      for (size_t i = 1; i < free_.size(); ++i) {
        if (free_[i].size() < free_[smallest].size()) smallest = i;
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
