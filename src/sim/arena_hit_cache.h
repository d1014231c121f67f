// A per-thread cache of recent DeviceArena::find hits, so the range checks on the launch
// and submit paths take no lock and search no map while the arena's allocations stay put.
//
// An entry is valid while its arena's generation is the one it was filled under: the
// arena bumps the generation (under its mutex, before the call that changed the
// allocation table returns) whenever an allocation is released or changes state. A hit
// therefore reports exactly what a locked lookup would have reported at the moment the
// generation was loaded; anything that happened-before the lookup (a sim_free on another
// thread that signalled this one) has already bumped it, so a hit is never stale.
#pragma once

#include <cstddef>
#include <cstdint>

namespace simpler::sim {

struct ArenaHit {
  uint64_t instance = 0;  // DeviceArena::instance_ (0: empty slot; instances start at 1)
  uint64_t generation = 0;
  uint64_t base = 0;  // the allocation: [base, base + size)
  uint64_t size = 0;
  bool free_pending = false;
};

class ArenaHitCache {
 public:
  static constexpr std::size_t kSlots = 8;  // a launch's tensors usually span a few buffers

  // The entry of `instance` at `generation` holding addr, or nullptr.
  const ArenaHit* find(uint64_t instance, uint64_t generation, uint64_t addr) const {
    for (const ArenaHit& hit : slots_) {
      if (hit.instance == instance && hit.generation == generation && addr >= hit.base &&
          addr - hit.base < hit.size) {
        return &hit;
      }
    }
    return nullptr;
  }
  // Replaces the oldest slot.
  void remember(const ArenaHit& hit) {
    slots_[next_] = hit;
    next_ = (next_ + 1) % kSlots;
  }
  // This thread's cache (shared by every arena; entries are tagged by instance).
  static ArenaHitCache& mine() {
    thread_local ArenaHitCache cache;
    return cache;
  }

 private:
  ArenaHit slots_[kSlots];
  std::size_t next_ = 0;
};

}  // namespace simpler::sim
