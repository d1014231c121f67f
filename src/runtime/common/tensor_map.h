// simpler runtime — dependency inference over tensor accesses (internal).
//
// Owned and used by one thread (the orchestrator). Keyed by buffer address; accesses to
// the same buffer are compared by overlap (per-dimension for compatible views, byte
// range otherwise). A reader waits for the overlapping writers not yet covered by a later
// write (RAW); a writer waits for those writers (WAW) and for the overlapping readers
// since them (WAR).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "simpler/abi/chip_types.h"

namespace simpler::rt {

enum class AccessKind : uint8_t { Read, Write, ReadWrite };

class TensorMap {
 public:
  explicit TensorMap(size_t capacity);
  ~TensorMap();
  TensorMap(const TensorMap&) = delete;
  TensorMap& operator=(const TensorMap&) = delete;

  // Appends to `deps` the ids of live earlier tasks that `task_id` must wait for when it
  // accesses `view` with `kind` (ids may repeat), then records the access. Returns false,
  // recording nothing and appending nothing, when that would exceed `capacity` live entries.
  bool access(uint64_t task_id, const ChipTensor& view, AccessKind kind,
              std::vector<uint64_t>& deps);
  // The task finished: its entries stop producing dependencies and free capacity.
  void retire(uint64_t task_id);
  size_t live_entries() const;
  size_t capacity() const;
  void clear();

  struct Impl;

 private:
  Impl* impl_;
};

}  // namespace simpler::rt
