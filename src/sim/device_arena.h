// One device's memory: a range of host address space reserved lazily with
// mmap(MAP_NORESERVE) (so an unused 1 GiB device costs nothing), carved by a first-fit
// allocator whose free blocks coalesce. Device pointers are real addresses in the range.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "support/huge_pages.h"

namespace simpler::sim {

inline constexpr std::size_t kDeviceAlignment = 1024;
// Allocations of support::kHugePageHintBytes or more ask for 2 MiB pages (a hint).
using support::kHugePageHintBytes;

class DeviceArena {
 public:
  explicit DeviceArena(uint64_t capacity_bytes);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // SIMPLER_OK, SIM_ERR_INVALID_VALUE (size 0) or SIM_ERR_OUT_OF_MEMORY.
  int allocate(std::size_t size, void** out);
  // ptr must be the exact base of a live allocation (or, with `pending`, of one marked by
  // mark_free_pending), else SIM_ERR_INVALID_POINTER.
  int release(void* ptr, bool pending = false);
  // A stream-ordered free (sim_free while queued stream work may still use the memory):
  // the allocation stops being valid for new work (check_range refuses it, a second free
  // is SIM_ERR_INVALID_POINTER) but keeps its memory until release(ptr, true).
  int mark_free_pending(void* ptr);
  // Frees every allocation and gives the pages back to the OS (device reset).
  void release_all();

  // True when ptr lies inside this arena's reserved range (lock-free).
  bool contains(const void* ptr) const;
  // [ptr, ptr+size) inside one live allocation: SIMPLER_OK, SIM_ERR_INVALID_POINTER (ptr not
  // in a live allocation) or SIM_ERR_OUT_OF_RANGE (runs past its end). With
  // `accept_free_pending`, an allocation whose free waits for queued work also counts
  // (work queued before the free runs after it returned).
  int check_range(const void* ptr, std::size_t size, bool accept_free_pending = false) const;
  // The allocation holding ptr (live or free-pending): its base, requested size and
  // whether its free is pending. SIM_ERR_INVALID_POINTER when none holds it.
  int find(const void* ptr, uint64_t* base, uint64_t* size, bool* free_pending) const;

  // Bumped whenever an allocation stops being live or changes state (see generation_).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  uint64_t capacity() const { return capacity_; }
  uint64_t used() const;

 private:
  int reserve_locked();
  int find_locked(const void* ptr, uint64_t* base, uint64_t* size, bool* free_pending) const;
  void bump_generation() { generation_.fetch_add(1, std::memory_order_release); }
  void return_pages(std::size_t offset, std::size_t size);

  const uint64_t capacity_;
  std::atomic<std::byte*> base_{nullptr};
  mutable std::mutex mutex_;
  std::map<std::size_t, std::size_t> free_blocks_;  // offset -> size, never adjacent
  struct Allocation {
    std::size_t requested;  // what range checks allow
    std::size_t rounded;    // what the allocation occupies
    bool free_pending;      // freed, memory kept until the work queued before the free ran
  };
  std::map<std::size_t, Allocation> live_;  // offset -> allocation
  uint64_t used_ = 0;
  // Bumped (under mutex_) whenever an allocation stops being live or changes state
  // (release, mark_free_pending, release_all). An allocation adds no bump: it cannot
  // overlap a live one. find() answers from a per-thread cache of earlier hits tagged
  // with this value, without the mutex, while it is unchanged (lookup_cache.h).
  std::atomic<uint64_t> generation_{0};
  const uint64_t instance_;  // process-unique: a cache entry never matches a later arena
};

}  // namespace simpler::sim
