// simpler runtime — device-tensor views the submit path already checked in this run
// (internal).
//
// A task's DEVICE tensor passes when device_tensor_quick_ok (tensor_shape.h) accepts its
// descriptor and its buffer lies in an allocation the address cache knows
// (address_check.h). Neither answer changes while the address cache keeps that
// allocation (a run, and the runs after it while nothing on the device is freed), so a
// view that passed is kept here and the next task naming a view of the same kind skips
// both checks. The key is every field those checks read except
// the buffer's address and the start offset; the entry keeps the allocation the buffer
// lay in (a buffer of the same size anywhere inside it passes the address check) and the
// largest start offset for which the view still lies in its buffer (the rest of quick_ok
// does not depend on it). So the slots and tiles of one buffer, and equal buffers carved
// from one allocation, share one entry. Forgotten whenever the address cache forgets (a
// run's start after a free). Used by the orchestrating thread only.
#pragma once

#include <cstdint>
#include <memory>

#include "simpler/abi/chip_types.h"
#include "tensor_shape.h"

namespace simpler::rt {

class ViewCache {
 public:
  void clear() {
    // An entry of rank 0 matches nothing (hit).
    for (uint32_t i = 0; i < kSets * kWays; ++i) store_->entries[i].ndims = 0;
  }

  // `t`, tensor `arg` of a task of kernel `func_id`, is a view that passes both checks.
  // The entry this position hit last is tried first (a chain, a decode step's kernels
  // repeat their views per position), the hashed set only when it does not match; either
  // way an entry matches exactly its own views, so the slot only saves the hash.
  bool hit(const ChipTensor& t, int32_t func_id, uint32_t arg) {
    Store& store = *store_;
    const uint32_t at = position(func_id, arg);
    return matches(store.entries[store.last[at]], t) || hit_in_set(t, func_id, arg, at);
  }

  // The set for view `t`, tensor `arg` of a task of kernel `func_id`: chosen by what an
  // entry must match (buffer size, the first two shapes) besides the kernel and the
  // position, so one kernel called on several shapes (a layer's matmuls) keeps an entry
  // for each; a set's ways keep the same view in several allocations (K and V caches).
  // Any key is correct (an entry matches only its own views); this only spreads them.
  static uint32_t key(const ChipTensor& t, int32_t func_id, uint32_t arg) {
    const uint64_t h = (t.buffer.size ^ (static_cast<uint64_t>(t.shapes[0]) << 20) ^
                        (static_cast<uint64_t>(t.shapes[t.ndims > 1 ? 1 : 0]) << 40)) +
                       static_cast<uint64_t>(func_id) * CHIP_MAX_TENSOR_ARGS + arg;
    return static_cast<uint32_t>((h * 0x9E3779B97F4A7C15ULL) >> 59);  // the top 5 bits
  }

  // `t`, passed under `key`, is a view that passes both checks (the hashed set only).
  bool hit(const ChipTensor& t, uint32_t key) const {
    const Entry* set = &store_->entries[(key & (kSets - 1)) * kWays];
    for (uint32_t w = 0; w < kWays; ++w) {
      if (matches(set[w], t)) return true;
    }
    return false;
  }

  // Keeps `t` (under `key`), a view that passed device_tensor_quick_ok and whose buffer
  // lies in the known allocation [begin, end), in place of its set's oldest entry. Empty
  // views are not kept.
  void add(const ChipTensor& t, uint32_t key, uint64_t begin, uint64_t end) {
    // quick_ok accepts start offset s iff (s + span + 1) * element bytes fits both the
    // buffer and int64 (its arithmetic is int64); with every shape >= 1 nothing else
    // it checks depends on s. span: the last element's offset from the first.
    uint64_t span = 0;
    for (uint32_t d = 0; d < t.ndims; ++d) {
      if (t.shapes[d] == 0) return;
      span += static_cast<uint64_t>(t.shapes[d] - 1) * static_cast<uint64_t>(t.strides[d]);
    }
    const uint64_t limit = t.buffer.size < uint64_t{INT64_MAX} ? t.buffer.size : INT64_MAX;
    const uint64_t elements = limit / static_cast<uint64_t>(quick_element_bytes(t.dtype));
    // Unreachable for a view that passed (and whose buffer is inside [begin, end)); the
    // lowest address kept is 1 (quick_ok refuses a null buffer).
    const uint64_t lowest = begin != 0 ? begin : 1;
    if (span >= elements || end - begin < t.buffer.size || end - t.buffer.size < lowest) return;
    const uint32_t set = key & (kSets - 1);
    Entry& e = store_->entries[set * kWays + next_[set]];
    next_[set] = static_cast<uint8_t>((next_[set] + 1) & (kWays - 1));
    e.lowest = lowest;
    e.addr_room = end - t.buffer.size - lowest;
    e.size = t.buffer.size;
    e.ndims = t.ndims;
    e.dtype = t.dtype;
    e.space = t.space;
    e.max_start = elements - span - 1;
    for (uint32_t d = 0; d < t.ndims; ++d) {
      e.shapes[d] = t.shapes[d];
      e.strides[d] = t.strides[d];
    }
  }

 private:
  // 32 sets of 4 (≈ 26 KiB): a decoder layer's recurring views, with room to spare.
  static constexpr uint32_t kSets = 32;  // key() returns 5 bits
  static constexpr uint32_t kWays = 4;
  static constexpr uint32_t kPositions = 256;  // per-position slots, by kernel and argument
  static_assert(kSets * kWays <= 256, "a slot is a uint8_t entry index");
  struct Entry {
    uint64_t lowest = 0;     // buffer addresses from here
    uint64_t addr_room = 0;  // ... to lowest + addr_room (the buffer ends inside the allocation)
    uint64_t size = 0;
    uint64_t max_start = 0;
    uint32_t ndims = 0;
    uint32_t dtype = 0;
    uint32_t space = 0;
    int64_t shapes[CHIP_TENSOR_MAX_DIMS] = {};
    int64_t strides[CHIP_TENSOR_MAX_DIMS] = {};
  };

  static bool matches(const Entry& e, const ChipTensor& t) {
    // Unsigned differences: an address below the allocation, or a negative start offset,
    // is far above the limit. Dimension 0 outside the loop: the common views are 1-D. An
    // empty entry (rank 0) matches nothing, not even a rank-0 descriptor whose other
    // fields equal its leftovers (such a descriptor is invalid, and the allocation a
    // forgotten entry names may be gone).
    if (e.ndims == 0 || t.buffer.size != e.size || t.ndims != e.ndims || t.dtype != e.dtype ||
        t.space != e.space || t.buffer.addr - e.lowest > e.addr_room ||
        static_cast<uint64_t>(t.start_offset) > e.max_start || t.shapes[0] != e.shapes[0] ||
        t.strides[0] != e.strides[0]) {
      return false;
    }
    for (uint32_t d = 1; d < e.ndims; ++d) {
      if (t.shapes[d] != e.shapes[d] || t.strides[d] != e.strides[d]) return false;
    }
    return true;
  }

  // hit()'s second try, out of line: the slot's check stays short enough to keep the
  // validation loop's values in registers.
  [[gnu::noinline]] bool hit_in_set(const ChipTensor& t, int32_t func_id, uint32_t arg,
                                    uint32_t at) {
    Entry* const set = &store_->entries[(key(t, func_id, arg) & (kSets - 1)) * kWays];
    for (uint32_t w = 0; w < kWays; ++w) {
      if (matches(set[w], t)) {
        store_->last[at] = static_cast<uint8_t>(&set[w] - store_->entries);
        return true;
      }
    }
    return false;
  }

  static uint32_t position(int32_t func_id, uint32_t arg) {
    return (static_cast<uint32_t>(func_id) * CHIP_MAX_TENSOR_ARGS + arg) & (kPositions - 1);
  }

  struct Store {
    Entry entries[kSets * kWays];
    uint8_t last[kPositions] = {};  // per position: the entry it hit last (any, at first)
  };
  // On the heap: 26 KiB inside the orchestrator would push its other members apart
  // (measured: 8 independent chains 15 % slower with the array inline).
  std::unique_ptr<Store> store_ = std::make_unique<Store>();
  uint8_t next_[kSets] = {};  // each set's oldest way (round robin)
};

}  // namespace simpler::rt
