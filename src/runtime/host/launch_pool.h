// simpler runtime host — preallocated kernel-mode launch records.
//
// A launch copies the caller's args into a record taken from the pool and hands it to a
// device job; the job's cleanup gives it back. The pool starts with kInitialRecords and
// only grows (in chunks) when more launches are in flight than it has ever held, so the
// steady-state launch path allocates nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "simpler/abi/chip_types.h"

namespace simpler::rt {
class LoadedProgram;
}

namespace simpler::rt::host {

class KernelMode;

struct LaunchRecord {
  KernelMode* owner = nullptr;
  const LoadedProgram* program = nullptr;
  int64_t callable_id = -1;
  ChipStorageTaskArgs args;
  LaunchRecord* next_free = nullptr;
};

class LaunchPool {
 public:
  static constexpr size_t kInitialRecords = 32;

  LaunchPool();
  LaunchRecord* acquire();
  void release(LaunchRecord* record);
  size_t capacity() const;

 private:
  void grow(size_t count);  // mutex_ held

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<LaunchRecord[]>> chunks_;
  size_t capacity_ = 0;
  LaunchRecord* free_ = nullptr;
};

}  // namespace simpler::rt::host
