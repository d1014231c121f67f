// simpler runtime — is an address range the orchestration hands the runtime real device
// memory? (internal)
//
// Every tensor a task or a value read/write names must lie inside one allocation of the
// engine's device: the sim driver knows the live allocations (sim_pointer_allocation).
// Asking it takes a lock, so a small cache keeps the allocations already seen; the heap
// ring (the engine's own allocation) is always in it. A cached allocation stays valid for
// the whole run: a run executes as a device job on a stream, and sim_free is ordered after
// the work already queued (the memory is reused only after the run). It stays valid into
// the next run only while nothing on the device was freed: the device's memory generation
// (sim_device_memory_generation) grows with every free, free-pending mark and reset, so a
// freed and re-allocated address is never answered from an entry of before the free.
#pragma once

#include <cstdint>
#include <string>

namespace simpler::rt {

class AddressCheck {
 public:
  explicit AddressCheck(int32_t device) : device_(device) {}

  // At a run's start: keeps the cache when no allocation of the device was freed (or
  // changed state) since the previous run's start, and says so; else forgets it. The heap
  // ring [heap_base, +heap_bytes) is always known.
  bool begin_run(uint64_t heap_base, uint64_t heap_bytes);

  // [addr, addr + size) inside one allocation of the device? An empty range always is.
  // Otherwise false with `why` naming the range and what is wrong.
  bool contains(uint64_t addr, uint64_t size, std::string* why) {
    return known(addr, size) || ask_driver(addr, size, why);
  }
  struct Range {
    uint64_t begin;
    uint64_t end;
  };
  // The cached allocation that holds the non-empty [addr, addr + size), or null (which
  // may still be device memory: contains() asks the driver).
  const Range* find(uint64_t addr, uint64_t size) const {
    for (uint32_t i = 0; i < count_; ++i) {
      if (addr >= ranges_[i].begin && addr <= ranges_[i].end && size <= ranges_[i].end - addr)
        return &ranges_[i];
    }
    return nullptr;
  }
  // contains() answered from the cache alone: false may still be device memory.
  bool known(uint64_t addr, uint64_t size) const {
    return size == 0 || find(addr, size) != nullptr;
  }

  // An allocation the run made itself (known valid until the run ends).
  void remember(uint64_t base, uint64_t size);

 private:
  bool ask_driver(uint64_t addr, uint64_t size, std::string* why);

  static constexpr uint32_t kSlots = 8;
  const int32_t device_;
  Range ranges_[kSlots] = {};
  uint32_t count_ = 0;
  uint32_t next_ = 1;  // round-robin replacement; slot 0 is the heap ring
  bool have_generation_ = false;
  uint64_t generation_ = 0;  // the device's memory generation read at the run's start
};

}  // namespace simpler::rt
