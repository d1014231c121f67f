// simpler runtime host — preallocated kernel-mode launch records.
//
// A launch copies the caller's args into a record taken from the pool and hands it to a
// device job; the job's cleanup gives it back. Records are reused last-released first, so
// the hot (cached) ones come back first. The pool starts with kInitialRecords and
// only grows (in chunks) when more launches are in flight than it has ever held, so the
// steady-state launch path allocates nothing.
//
// No lock of its own: acquire() is called by one thread at a time (the launcher holds
// KernelMode::mutex_), release() by any stream executor. Released records go onto a
// lock-free stack that only ever sees pushes (CAS) and take-all (exchange), so there is
// no ABA problem; acquire() refills its private free list from it when that runs dry.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "simpler/abi/chip_types.h"

namespace simpler::rt {
class LoadedProgram;
}

namespace simpler::rt::host {

class KernelMode;

// Compact: a launch with few args (the common case) fits inline, so records stay a few
// hundred bytes instead of a full 4 KiB ChipStorageTaskArgs and a launcher running ahead
// of the device touches few fresh pages. Larger arg lists go to `spill`, allocated the
// first time this record needs it and kept for its later reuses.
struct LaunchRecord {
  static constexpr uint32_t kInlineTensors = 4;
  static constexpr uint32_t kInlineScalars = 8;

  LaunchRecord* next_free = nullptr;
  KernelMode* owner = nullptr;
  const LoadedProgram* program = nullptr;
  int64_t callable_id = -1;
  bool uses_spill = false;
  uint32_t tensor_count = 0;
  uint32_t scalar_count = 0;
  ChipTensor tensors[kInlineTensors];
  uint64_t scalars[kInlineScalars];
  std::unique_ptr<ChipStorageTaskArgs> spill;

  // Copies the used part of args (the caller may reuse them at once). Throws
  // std::bad_alloc only when a first large launch on this record cannot get its spill.
  void store_args(const ChipStorageTaskArgs& args);
  // The args as the engine takes them: the spill, or the inline args expanded into
  // scratch (only the used part is written).
  const ChipStorageTaskArgs& expanded_args(ChipStorageTaskArgs& scratch) const;
};

class LaunchPool {
 public:
  static constexpr size_t kInitialRecords = 32;

  LaunchPool();
  LaunchPool(const LaunchPool&) = delete;
  LaunchPool& operator=(const LaunchPool&) = delete;

  LaunchRecord* acquire();             // one caller at a time (serialized by the owner)
  void release(LaunchRecord* record);  // any thread, lock-free
  size_t capacity() const { return capacity_.load(std::memory_order_relaxed); }

 private:
  void grow(size_t count);  // acquire()'s caller only

  std::vector<std::unique_ptr<LaunchRecord[]>> chunks_;
  std::atomic<size_t> capacity_{0};
  LaunchRecord* free_ = nullptr;  // acquire()'s private list
  // Released records (by the stream executors). On a line of its own, so the launching
  // thread's reads of free_ and capacity_ do not miss on every executor release.
  alignas(64) std::atomic<LaunchRecord*> returned_{nullptr};
};

}  // namespace simpler::rt::host
