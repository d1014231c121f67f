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
