// simpler runtime — device-tensor views the submit path already checked in this run
// (internal).
//
// A task's DEVICE tensor passes when device_tensor_quick_ok (tensor_shape.h) accepts its
// descriptor and its buffer lies in memory the address cache knows (address_check.h).
// Within a run neither answer changes for a given descriptor (a known allocation stays
// valid until the run ends), so a view that passed is kept here and the next task naming
// it skips both checks. The key is every field those checks read except start_offset;
// the entry keeps the largest start offset for which the view still lies in its buffer,
// so the slots and tiles of one buffer (one shape, other offsets) share one entry.
// Forgotten at each run's start. Used by the orchestrating thread only.
#pragma once

#include <cstdint>

#include "simpler/abi/chip_types.h"
#include "tensor_shape.h"

namespace simpler::rt {

class ViewCache {
 public:
  void clear() {
    for (Entry& e : entries_) e.ndims = 0;  // no view has rank 0: never matches
  }

  // `t`, passed as tensor `arg` of a task, is a view that passed both checks.
  bool hit(const ChipTensor& t, uint32_t arg) const {
    const Entry& e = entries_[arg & (kEntries - 1)];
    // A negative start offset is above max_start (<= INT64_MAX) as an unsigned number.
    // Dimension 0 outside the loop: the common views are 1-D (an empty entry's rank 0
    // never matches).
    if (t.buffer.addr != e.addr || t.buffer.size != e.size || t.ndims != e.ndims ||
        t.dtype != e.dtype || t.space != e.space ||
        static_cast<uint64_t>(t.start_offset) > e.max_start || t.shapes[0] != e.shapes[0] ||
        t.strides[0] != e.strides[0]) {
      return false;
    }
    for (uint32_t d = 1; d < e.ndims; ++d) {
      if (t.shapes[d] != e.shapes[d] || t.strides[d] != e.strides[d]) return false;
    }
    return true;
  }

  // Keeps `t` (tensor `arg`); only for a view that passed device_tensor_quick_ok and whose
  // buffer the address cache knows. Empty views are not kept.
  void add(const ChipTensor& t, uint32_t arg) {
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
    if (span >= elements) return;  // unreachable for a view that passed
    Entry& e = entries_[arg & (kEntries - 1)];
    e.addr = t.buffer.addr;
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
  // A task's tensors are few: tensor i uses entry i mod 4 (tasks of one kernel pass
  // their views in the same order).
  static constexpr uint32_t kEntries = 4;
  struct Entry {
    uint64_t addr = 0;
    uint64_t size = 0;
    uint64_t max_start = 0;
    uint32_t ndims = 0;
    uint32_t dtype = 0;
    uint32_t space = 0;
    int64_t shapes[CHIP_TENSOR_MAX_DIMS] = {};
    int64_t strides[CHIP_TENSOR_MAX_DIMS] = {};
  };
  Entry entries_[kEntries];
};

}  // namespace simpler::rt
