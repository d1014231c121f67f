// simpler runtime host — preallocated kernel-mode launch records.
//
// A launch copies the caller's args into a record taken from the pool and hands it to a
// device job; the job's cleanup gives it back. The pool starts with kInitialRecords and
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
#include <memory>
#include <vector>

#include "simpler/abi/chip_types.h"

namespace simpler::rt {
class LoadedProgram;
}

namespace simpler::rt::host {

class KernelMode;

struct LaunchRecord {
  LaunchRecord* next_free = nullptr;  // first: growing the pool touches one line per record
  KernelMode* owner = nullptr;
  const LoadedProgram* program = nullptr;
  int64_t callable_id = -1;
  ChipStorageTaskArgs args;  // only the used tensors/scalars are written per launch
};

class LaunchPool {
 public:
  static constexpr size_t kInitialRecords = 32;

  LaunchPool();
  LaunchPool(const LaunchPool&) = delete;
  LaunchPool& operator=(const LaunchPool&) = delete;

  LaunchRecord* acquire();              // one caller at a time (serialized by the owner)
  void release(LaunchRecord* record);   // any thread, lock-free
  size_t capacity() const { return capacity_.load(std::memory_order_relaxed); }

 private:
  void grow(size_t count);  // acquire()'s caller only

  std::vector<std::unique_ptr<LaunchRecord[]>> chunks_;
  std::atomic<size_t> capacity_{0};
  LaunchRecord* free_ = nullptr;                // acquire()'s private list
  std::atomic<LaunchRecord*> returned_{nullptr};  // released records
};

}  // namespace simpler::rt::host
