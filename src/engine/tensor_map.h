// simpler runtime — dependency inference over tensor accesses (internal).
//
// Owned and used by one thread (the orchestrator). Keyed by buffer address; accesses to
// the same buffer are compared by overlap (per-dimension for compatible views, byte
// range otherwise). A reader waits for the overlapping writers not yet covered by a later
// write (RAW); a writer waits for those writers (WAW) and for the overlapping readers
// since them (WAR).
//
// Guarantee: every earlier conflicting access (overlapping bytes, at least one a write)
// of a task not retired yet is reachable from the new task through the returned edges.
// An entry fully covered by a later write is dropped (that write waits for it, and anyone
// overlapping it overlaps that write), which keeps the live set small. This relies on
// retire(t) being called only once t has finished, and t finishing only after the tasks
// it was told to wait for. A descriptor the map cannot interpret (bad dtype/ndims/shape,
// int64 overflow) is treated as touching its whole buffer. No edge links accesses whose
// byte ranges are apart, nor tiles/slices (equal strides and dtype) with disjoint boxes.
// Implementation: engine/tensor_map.cpp (pools, per-buffer lanes of scan arrays split by
// column band, task lines of a record and its entries), engine/overlap.{h,cpp} (view geometry),
// engine/tensor_map_index.h (hash index), engine/tensor_map_interval_tree.h (byte-range
// trees for lanes with many live views).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "simpler/abi/chip_types.h"

namespace simpler::rt {

enum class AccessKind : uint8_t { Read, Write, ReadWrite };

class TensorMap {
 public:
  // Throws std::invalid_argument when capacity exceeds 2^29 - 1 entries. Memory grows
  // with use up to `capacity` entries and is then reused (no allocation per access in
  // steady state); growth may throw std::bad_alloc, leaving the map consistent.
  explicit TensorMap(size_t capacity);
  // The same, with the number of readers (or writers) of one buffer above which their
  // byte ranges are indexed in a tree instead of scanned; tests pass 0 to index every
  // buffer. Behaviour (the returned edges) does not depend on it, only speed.
  static constexpr size_t kDefaultIndexAbove = 64;
  // `tile_grids` false keeps every buffer on the general lanes (tests compare both):
  // buffers whose live views are all tiles of one grid are otherwise looked up by tile.
  TensorMap(size_t capacity, size_t index_above, bool tile_grids = true);
  ~TensorMap();
  TensorMap(const TensorMap&) = delete;
  TensorMap& operator=(const TensorMap&) = delete;

  // A hint before access() of each of `views` (a task's tensors, in order): starts loading
  // what their lookups will read, so that their cache misses overlap instead of following
  // one another. Reads only the descriptors; changes nothing, any input is fine.
  void prefetch(const ChipTensor* views, size_t n) const {
    if (hint_) prefetch_views(views, n);  // (a small map stays in L1: no call)
  }
  // Appends to `deps` the ids of live earlier tasks that `task_id` must wait for when it
  // accesses `view` with `kind` (ids may repeat), then records the access. Returns false,
  // recording nothing and appending nothing, when that would exceed `capacity` live entries.
  bool access(uint64_t task_id, const ChipTensor& view, AccessKind kind,
              std::vector<uint64_t>& deps);
  // Appends the ids of the live tasks an access of `view` with `kind` would wait for (as
  // access() would), without recording anything: what a synchronous read (Read) or write
  // (Write) of the view by the orchestrator itself must wait for.
  void conflicts(const ChipTensor& view, AccessKind kind, std::vector<uint64_t>& deps);
  // The task finished: its entries stop producing dependencies and free capacity.
  // O(entries of that task); an unknown id is ignored. Ids may be reused after retire.
  void retire(uint64_t task_id);
  size_t live_entries() const;
  size_t capacity() const;
  void clear();

  struct Impl;

 private:
  void prefetch_views(const ChipTensor* views, size_t n) const;

  Impl* impl_;
  bool hint_ = false;  // set by Impl once its tile index has outgrown L1
};

}  // namespace simpler::rt
