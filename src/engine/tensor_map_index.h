// simpler runtime — a flat hash index from 64-bit keys to 32-bit record numbers, for the
// tensor map (internal). Open addressing with linear probing and backward-shift deletion,
// so no tombstones accumulate; it only allocates when it grows, which stops once the
// number of live keys stops growing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace simpler::rt {

class FlatIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  FlatIndex() { reset_slots(kMinSlots); }

  uint32_t find(uint64_t key) const {
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.value == kNone) return kNone;
      if (slot.key == key) return slot.value;
    }
  }

  // `key` must be absent; `value` must not be kNone.
  void insert(uint64_t key, uint32_t value) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    place(key, value);
    ++count_;
  }

  // Sets the value of `key`, which must be present; never allocates.
  void assign(uint64_t key, uint32_t value) {
    size_t i = home(key);
    while (slots_[i].key != key || slots_[i].value == kNone) i = (i + 1) & mask_;
    slots_[i].value = value;
  }

  // Removes `key` if present.
  void erase(uint64_t key) {
    size_t i = home(key);
    while (slots_[i].value != kNone && slots_[i].key != key) i = (i + 1) & mask_;
    if (slots_[i].value == kNone) return;
    // Backward shift: pull later members of the probe run into the hole when their home
    // position does not lie cyclically in (hole, j].
    size_t hole = i;
    for (size_t j = (i + 1) & mask_; slots_[j].value != kNone; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].key);
      const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].value = kNone;
    --count_;
  }

  void clear() {
    for (Slot& slot : slots_) slot.value = kNone;
    count_ = 0;
  }

  size_t size() const { return count_; }

 private:
  struct Slot {
    uint64_t key;
    uint32_t value;
  };
  static constexpr size_t kMinSlots = 64;

  // Fibonacci hashing: the high bits of key * 2^64/phi spread aligned addresses and
  // consecutive ids evenly.
  size_t home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void place(uint64_t key, uint32_t value) {
    size_t i = home(key);
    while (slots_[i].value != kNone) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value};
  }

  void reset_slots(size_t n) {
    slots_.assign(n, Slot{0, kNone});
    mask_ = n - 1;
    shift_ = 64;
    for (size_t v = n; v > 1; v >>= 1) --shift_;
  }

  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    reset_slots(old.size() * 2);
    for (const Slot& slot : old)
      if (slot.value != kNone) place(slot.key, slot.value);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t count_ = 0;
};

}  // namespace simpler::rt

namespace simpler::rt {

// The same, keyed by a pair (buffer address, byte offset): the tiles of grid buffers.
// Separate from FlatIndex so that neither pays for the other's key width.
class PairIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  PairIndex() { reset_slots(kMinSlots); }

  uint32_t find(uint64_t a, int64_t b) const {
    for (size_t i = home(a, b);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.value == kNone) return kNone;
      if (slot.a == a && slot.b == b) return slot.value;
    }
  }

  // The pair must be absent; `value` must not be kNone. May throw std::bad_alloc when it
  // grows, changing nothing.
  void insert(uint64_t a, int64_t b, uint32_t value) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    place(a, b, value);
    ++count_;
  }

  // Removes the pair if present (backward shift, as FlatIndex::erase).
  void erase(uint64_t a, int64_t b) {
    size_t i = home(a, b);
    while (slots_[i].value != kNone && !(slots_[i].a == a && slots_[i].b == b)) i = (i + 1) & mask_;
    if (slots_[i].value == kNone) return;
    size_t hole = i;
    for (size_t j = (i + 1) & mask_; slots_[j].value != kNone; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].a, slots_[j].b);
      const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].value = kNone;
    --count_;
  }

  void clear() {
    for (Slot& slot : slots_) slot.value = kNone;
    count_ = 0;
  }

  size_t size() const { return count_; }

 private:
  struct Slot {
    uint64_t a;
    int64_t b;
    uint32_t value;
  };
  static constexpr size_t kMinSlots = 64;

  size_t home(uint64_t a, int64_t b) const {
    const uint64_t mixed = (a ^ (static_cast<uint64_t>(b) * 0xC2B2AE3D27D4EB4Full));
    return static_cast<size_t>((mixed * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void place(uint64_t a, int64_t b, uint32_t value) {
    size_t i = home(a, b);
    while (slots_[i].value != kNone) i = (i + 1) & mask_;
    slots_[i] = Slot{a, b, value};
  }

  void reset_slots(size_t n) {
    slots_.assign(n, Slot{0, 0, kNone});
    mask_ = n - 1;
    shift_ = 64;
    for (size_t v = n; v > 1; v >>= 1) --shift_;
  }

  void grow() {
    std::vector<Slot> bigger(slots_.size() * 2, Slot{0, 0, kNone});
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.swap(bigger);
    mask_ = slots_.size() - 1;
    --shift_;
    for (const Slot& slot : old)
      if (slot.value != kNone) place(slot.a, slot.b, slot.value);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t count_ = 0;
};

}  // namespace simpler::rt
