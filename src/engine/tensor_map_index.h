// simpler runtime — flat hash indexes to 32-bit record numbers, for the
// tensor map (internal). Open addressing with linear probing and backward-shift deletion,
// so no tombstones accumulate; it only allocates when it grows, which stops once the
// number of live keys stops growing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace simpler::rt {

// Robin Hood ordering (a key never sits further from its home slot than the key it
// passed), so that a lookup stops at the first key closer to its home than the probe is
// and a deletion shifts back only the displaced keys behind it.
class FlatIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  FlatIndex() { reset_slots(kMinSlots); }

  uint32_t find(uint64_t key) const {
    const size_t i = position(key);
    return i == kAbsent ? kNone : slots_[i].value;
  }

  // `key` must be absent; `value` must not be kNone. May throw std::bad_alloc when it
  // grows, changing nothing.
  void insert(uint64_t key, uint32_t value) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    place(slots_, key, value);
    ++count_;
  }

  // The value of `key` if present; otherwise inserts `key` with `value` (which must not be
  // kNone) and returns kNone. One probe where find() then insert() take two. May throw
  // std::bad_alloc when it grows, changing nothing.
  uint32_t find_or_insert(uint64_t key, uint32_t value) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    size_t i = home(key);
    for (size_t d = 0;; i = (i + 1) & mask_, ++d) {
      const Slot& slot = slots_[i];
      if (slot.value != kNone) {
        if (slot.key == key) return slot.value;
        if (distance(slot, i) >= d) continue;
      }
      carry(slots_, i, d, Slot{key, value});
      ++count_;
      return kNone;
    }
  }

  // Sets the value of `key`, which must be present; never allocates.
  void assign(uint64_t key, uint32_t value) { slots_[position(key)].value = value; }

  // Removes `key` if present.
  void erase(uint64_t key) {
    size_t hole = position(key);
    if (hole == kAbsent) return;
    for (size_t j = (hole + 1) & mask_; slots_[j].value != kNone && distance(slots_[j], j) != 0;
         j = (j + 1) & mask_) {
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole].value = kNone;
    --count_;
  }

  void clear() {
    for (Slot& slot : slots_) slot.value = kNone;
    count_ = 0;
  }

  size_t size() const { return count_; }

  // Calls f(key, value) for every key.
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& slot : slots_)
      if (slot.value != kNone) f(slot.key, slot.value);
  }

 private:
  struct Slot {
    uint64_t key;
    uint32_t value;
  };
  static constexpr size_t kMinSlots = 64;
  static constexpr size_t kAbsent = SIZE_MAX;

  // Fibonacci hashing: the high bits of key * 2^64/phi spread aligned addresses and
  // consecutive ids evenly.
  size_t home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  // How far the key in slot `i` sits from its home.
  size_t distance(const Slot& slot, size_t i) const { return (i - home(slot.key)) & mask_; }

  // The slot of `key`, or kAbsent.
  size_t position(uint64_t key) const {
    size_t i = home(key);
    for (size_t d = 0;; i = (i + 1) & mask_, ++d) {
      const Slot& slot = slots_[i];
      if (slot.value == kNone) return kAbsent;
      if (slot.key == key) return i;
      if (distance(slot, i) < d) return kAbsent;
    }
  }

  // Puts `cur` (absent from `slots`), whose probe reached slot `i` at distance `d` from
  // its home, there, moving richer keys on.
  void carry(std::vector<Slot>& slots, size_t i, size_t d, Slot cur) const {
    for (;; i = (i + 1) & mask_, ++d) {
      Slot& slot = slots[i];
      if (slot.value == kNone) {
        slot = cur;
        return;
      }
      const size_t own = distance(slot, i);
      if (own < d) {
        std::swap(cur, slot);
        d = own;
      }
    }
  }
  void place(std::vector<Slot>& slots, uint64_t key, uint32_t value) const {
    carry(slots, home(key), 0, Slot{key, value});
  }

  void reset_slots(size_t n) {
    slots_.assign(n, Slot{0, kNone});
    set_size(n);
  }

  void set_size(size_t n) {
    mask_ = n - 1;
    shift_ = 64;
    for (size_t v = n; v > 1; v >>= 1) --shift_;
  }

  // Re-places every key in twice the slots. May throw std::bad_alloc, changing nothing.
  void grow() {
    std::vector<Slot> fresh(slots_.size() * 2, Slot{0, kNone});  // the only allocation
    set_size(fresh.size());
    for (const Slot& slot : slots_)
      if (slot.value != kNone) place(fresh, slot.key, slot.value);
    slots_.swap(fresh);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t count_ = 0;
};

// A FlatIndex that remembers its last lookup (found or not): the accesses of a tiled loop
// mostly name the buffer of the access before, which then costs a compare, not a probe.
class RecentIndex {
 public:
  static constexpr uint32_t kNone = FlatIndex::kNone;

  uint32_t find(uint64_t key) {
    if (known_ && key == key_) return value_;
    value_ = index_.find(key);
    key_ = key;
    known_ = true;
    return value_;
  }
  // As FlatIndex::insert and erase; forget the remembered lookup of that key.
  void insert(uint64_t key, uint32_t value) {
    if (key == key_) known_ = false;  // (first: insert may throw)
    index_.insert(key, value);
  }
  void erase(uint64_t key) {
    if (key == key_) known_ = false;
    index_.erase(key);
  }
  void clear() {
    known_ = false;
    index_.clear();
  }
  size_t size() const { return index_.size(); }

 private:
  FlatIndex index_;
  uint64_t key_ = 0;
  uint32_t value_ = kNone;
  bool known_ = false;
};

// Task id -> record number. Task ids are mostly consecutive (the engine numbers its tasks
// and retires them in order): each id has one direct slot, at the id modulo the table size
// (four or more slots per live id), so filing, finding and dropping a task is one load or
// store, and consecutive tasks share cache lines. An id whose slot another live id holds
// goes to a hashed overflow index, so any pattern of ids works, at FlatIndex's cost. Each
// direct slot counts the overflowed ids it would hold (in its padding), so an id whose slot
// counts none is absent or direct: no probe, however many other ids overflowed.
class TaskIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  TaskIndex() : direct_(kMinSlots, Slot{0, kNone, 0}), mask_(kMinSlots - 1) {}

  uint32_t find(uint64_t key) const {
    const Slot& slot = direct_[key & mask_];
    if (slot.value != kNone && slot.key == key) return slot.value;
    return slot.spilled == 0 ? kNone : overflow_.find(key);
  }

  // The value of `key` if it holds its direct slot, else kNone (a hint: it may overflow).
  uint32_t find_direct(uint64_t key) const {
    const Slot& slot = direct_[key & mask_];
    return slot.value != kNone && slot.key == key ? slot.value : kNone;
  }

  // Files `key` with `value` in its direct slot and returns true when that is certain to
  // be right without a probe or growth: the slot is free, no overflowed key belongs to it
  // (so `key` is absent) and there is room. Otherwise changes nothing and returns false.
  bool try_insert_direct(uint64_t key, uint32_t value) {
    Slot& slot = direct_[key & mask_];
    if (slot.value != kNone || slot.spilled != 0 || (count_ + 1) * 4 > direct_.size()) return false;
    slot.key = key;
    slot.value = value;
    ++count_;
    return true;
  }

  // As FlatIndex::find_or_insert. May throw std::bad_alloc, changing nothing.
  uint32_t find_or_insert(uint64_t key, uint32_t value) {
    if ((count_ + 1) * 4 > direct_.size()) grow();
    Slot& slot = direct_[key & mask_];
    if (slot.value != kNone && slot.key == key) return slot.value;
    if (slot.spilled != 0) {
      const uint32_t found = overflow_.find(key);
      if (found != kNone) return found;
    }
    if (slot.value == kNone) {
      slot.key = key;
      slot.value = value;
    } else {
      overflow_.insert(key, value);  // (first: it may throw)
      ++slot.spilled;
    }
    ++count_;
    return kNone;
  }

  // `key` must be absent; `value` must not be kNone.
  void insert(uint64_t key, uint32_t value) { find_or_insert(key, value); }

  // Removes `key` if present.
  void erase(uint64_t key) {
    Slot& slot = direct_[key & mask_];
    if (slot.value != kNone && slot.key == key) {
      slot.value = kNone;
      --count_;
    } else if (slot.spilled != 0) {
      const size_t before = overflow_.size();
      overflow_.erase(key);  // one probe; a no-op when absent
      const size_t gone = before - overflow_.size();
      count_ -= gone;
      slot.spilled -= static_cast<uint32_t>(gone);
    }
  }

  void clear() {
    for (Slot& slot : direct_) slot = Slot{0, kNone, 0};
    overflow_.clear();
    count_ = 0;
  }

  size_t size() const { return count_; }
  size_t overflowed() const { return overflow_.size(); }  // (for tests)

 private:
  struct Slot {
    uint64_t key;
    uint32_t value;
    uint32_t spilled;  // overflowed keys whose direct slot this is (in the padding)
  };
  static_assert(sizeof(Slot) == 16);
  static constexpr size_t kMinSlots = 64;

  // Twice the direct slots: ids apart modulo n are apart modulo 2n, so every direct id
  // keeps a slot of its own (overflowed ids stay where they are, counted by their new
  // slots). May throw std::bad_alloc, changing nothing.
  void grow() {
    std::vector<Slot> fresh(direct_.size() * 2, Slot{0, kNone, 0});
    const size_t mask = fresh.size() - 1;
    for (const Slot& slot : direct_)
      if (slot.value != kNone) {
        fresh[slot.key & mask].key = slot.key;
        fresh[slot.key & mask].value = slot.value;
      }
    overflow_.for_each([&](uint64_t key, uint32_t) { ++fresh[key & mask].spilled; });
    direct_.swap(fresh);
    mask_ = mask;
  }

  std::vector<Slot> direct_;
  size_t mask_;
  FlatIndex overflow_;
  size_t count_ = 0;
};

// An index of records that hold their own keys (the tiles of grid buffers, keyed by
// buffer address and first byte): 8-byte slots of a 32-bit hash and a record number, so
// that a large index stays in cache; a lookup confirms a hash match on the record itself.
// Open addressing with linear probing and backward-shift deletion, like FlatIndex.
class TaggedIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The 32-bit hash of a buffer address and a byte offset in it: of their sum, the byte's
  // own address (one multiply on the lookup path), which only aliasing buffers share.
  static uint32_t hash(uint64_t a, int64_t b) {
    return static_cast<uint32_t>(((a + static_cast<uint64_t>(b)) * 0x9E3779B97F4A7C15ull) >> 32);
  }

  TaggedIndex() { reset_slots(kMinSlots); }

  // The record with this hash for which is(record) holds, or kNone.
  template <typename Is>
  uint32_t find(uint32_t h, Is&& is) const {
    for (size_t i = home(h);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.value == kNone) return kNone;
      if (slot.hash == h && is(slot.value)) return slot.value;
    }
  }

  // `value` (not kNone, not in the index) under hash `h`. May throw std::bad_alloc when
  // it grows, changing nothing.
  void insert(uint32_t h, uint32_t value) {
    // At most a quarter full while the slots fit in 32 KB (fewer, shorter probe runs,
    // whose length a lookup's branches cannot predict), at most half full beyond.
    const size_t limit = slots_.size() < kSparseSlots ? slots_.size() / 4 : slots_.size() / 2;
    if (count_ + 1 > limit) grow();
    place(h, value);
    ++count_;
  }

  // Removes `value`, filed under hash `h`, if present.
  void erase(uint32_t h, uint32_t value) {
    size_t i = home(h);
    while (slots_[i].value != kNone && slots_[i].value != value) i = (i + 1) & mask_;
    if (slots_[i].value == kNone) return;
    size_t hole = i;
    for (size_t j = (i + 1) & mask_; slots_[j].value != kNone; j = (j + 1) & mask_) {
      const size_t home_j = home(slots_[j].hash);
      const bool stays =
          hole <= j ? (hole < home_j && home_j <= j) : (hole < home_j || home_j <= j);
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

  size_t bytes() const { return slots_.size() * sizeof(Slot); }
  // Where a lookup of hash `h` starts: for prefetching only.
  const void* home_slot(uint32_t h) const { return &slots_[home(h)]; }
  // The record in `h`'s home slot if filed there under `h` (a guess: not compared in
  // full, nor probed further), else kNone. For prefetching only.
  uint32_t home_guess(uint32_t h) const {
    const Slot& slot = slots_[home(h)];
    return slot.hash == h ? slot.value : kNone;
  }

 private:
  struct Slot {
    uint32_t hash;
    uint32_t value;
  };
  static constexpr size_t kMinSlots = 64;
  static constexpr size_t kSparseSlots = 4096;

  size_t home(uint32_t h) const { return static_cast<size_t>(h >> shift_); }

  void place(uint32_t h, uint32_t value) {
    size_t i = home(h);
    while (slots_[i].value != kNone) i = (i + 1) & mask_;
    slots_[i] = Slot{h, value};
  }

  void reset_slots(size_t n) {
    slots_.assign(n, Slot{0, kNone});
    mask_ = n - 1;
    shift_ = 32;
    for (size_t v = n; v > 1; v >>= 1) --shift_;
  }

  void grow() {
    if (shift_ == 0) throw std::bad_alloc();  // 2^32 slots: the hash has no more bits
    std::vector<Slot> bigger(slots_.size() * 2, Slot{0, kNone});
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.swap(bigger);
    mask_ = slots_.size() - 1;
    --shift_;
    for (const Slot& slot : old)
      if (slot.value != kNone) place(slot.hash, slot.value);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 32;
  size_t count_ = 0;
};

}  // namespace simpler::rt
