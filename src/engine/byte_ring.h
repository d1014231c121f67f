// simpler runtime — an in-order ring allocator over a fixed byte range (internal).
//
// Used by the orchestrator thread only: for the heap ring (device memory for
// runtime-allocated tensors) and the task-argument arena (host memory). Positions are
// monotonic byte counters; an allocation that would straddle the end of the range skips
// to its start (the skipped bytes are released with the allocation). Space is released
// strictly in allocation order by release_to(end of an earlier allocation).
#pragma once

#include <cstdint>

namespace simpler::rt {

class ByteRing {
 public:
  // capacity must be a multiple of every alignment used.
  void reset(uint64_t capacity) {
    capacity_ = capacity;
    // A power-of-two capacity (the argument arena's) wraps with a mask: no division on
    // the submit path.
    mask_ = capacity != 0 && (capacity & (capacity - 1)) == 0 ? capacity - 1 : 0;
    head_ = tail_ = 0;
  }

  // Reserves `size` bytes aligned to `align` (a power of two). On success writes the
  // offset into the range and the position to release up to; false when it does not fit
  // now (release earlier allocations and retry) — never true for size > capacity().
  bool try_alloc(uint64_t size, uint64_t align, uint64_t* offset, uint64_t* end) {
    if (size > capacity_) return false;
    if (head_ == tail_) head_ = tail_ = round_up(head_);  // empty: start fresh
    const uint64_t pos = wrap(head_);
    const uint64_t pad = (align - (pos & (align - 1))) & (align - 1);
    uint64_t start = head_ + pad;
    if (pos + pad + size > capacity_) start = head_ + (capacity_ - pos);  // wrap to offset 0
    const uint64_t new_head = start + size;
    if (new_head - tail_ > capacity_) return false;
    *offset = wrap(start);
    *end = new_head;
    head_ = new_head;
    return true;
  }

  void release_to(uint64_t end) { tail_ = end; }
  void release_all() { tail_ = head_; }
  uint64_t used() const { return head_ - tail_; }
  uint64_t capacity() const { return capacity_; }

 private:
  uint64_t round_up(uint64_t v) const {  // to a multiple of the capacity
    if (mask_ != 0) return (v + mask_) & ~mask_;
    return capacity_ == 0 ? v : (v + capacity_ - 1) / capacity_ * capacity_;
  }
  uint64_t wrap(uint64_t v) const { return mask_ != 0 ? v & mask_ : v % capacity_; }
  uint64_t capacity_ = 0;
  uint64_t mask_ = 0;  // capacity_ - 1 when it is a power of two (above 1), else 0
  uint64_t head_ = 0;
  uint64_t tail_ = 0;
};

}  // namespace simpler::rt
