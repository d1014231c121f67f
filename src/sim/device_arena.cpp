#include "device_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include "arena_hit_cache.h"
#include "simpler/abi/status.h"

namespace simpler::sim {
namespace {

// Freed blocks at least this large hand their whole pages back to the OS, so a test that
// allocates and frees big buffers does not keep the RSS.
constexpr std::size_t kReturnPagesThreshold = std::size_t{1} << 20;

std::size_t round_up(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

uint64_t next_instance() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

DeviceArena::DeviceArena(uint64_t capacity_bytes)
    : capacity_(capacity_bytes / kDeviceAlignment * kDeviceAlignment), instance_(next_instance()) {}

DeviceArena::~DeviceArena() {
  std::byte* base = base_.load(std::memory_order_acquire);
  if (base != nullptr) munmap(base, capacity_);
}

int DeviceArena::reserve_locked() {
  if (base_.load(std::memory_order_relaxed) != nullptr) return SIMPLER_OK;
  void* base = mmap(nullptr, capacity_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return SIM_ERR_OUT_OF_MEMORY;
  free_blocks_.emplace(0, capacity_);
  base_.store(static_cast<std::byte*>(base), std::memory_order_release);
  return SIMPLER_OK;
}

int DeviceArena::allocate(std::size_t size, void** out) {
  if (size == 0) return SIM_ERR_INVALID_VALUE;
  if (size > capacity_) return SIM_ERR_OUT_OF_MEMORY;
  const std::size_t rounded = round_up(size, kDeviceAlignment);
  std::lock_guard lock(mutex_);
  if (int status = reserve_locked(); status != SIMPLER_OK) return status;
  for (auto it = free_blocks_.begin(); it != free_blocks_.end(); ++it) {
    if (it->second < rounded) continue;
    const std::size_t offset = it->first;
    const std::size_t remaining = it->second - rounded;
    free_blocks_.erase(it);
    if (remaining != 0) free_blocks_.emplace(offset + rounded, remaining);
    live_.emplace(offset, Allocation{size, rounded, false});
    used_ += rounded;
    *out = base_.load(std::memory_order_relaxed) + offset;
    if (rounded >= kHugePageHintBytes)
      support::advise_huge_pages(base_.load(std::memory_order_relaxed) + offset, rounded);
    return SIMPLER_OK;
  }
  return SIM_ERR_OUT_OF_MEMORY;
}

int DeviceArena::mark_free_pending(void* ptr) {
  std::lock_guard lock(mutex_);
  std::byte* base = base_.load(std::memory_order_relaxed);
  if (base == nullptr || !contains(ptr)) return SIM_ERR_INVALID_POINTER;
  auto live = live_.find(static_cast<std::size_t>(static_cast<std::byte*>(ptr) - base));
  if (live == live_.end() || live->second.free_pending) return SIM_ERR_INVALID_POINTER;
  live->second.free_pending = true;
  bump_generation();
  return SIMPLER_OK;
}

int DeviceArena::release(void* ptr, bool pending) {
  std::lock_guard lock(mutex_);
  std::byte* base = base_.load(std::memory_order_relaxed);
  if (base == nullptr || !contains(ptr)) return SIM_ERR_INVALID_POINTER;
  const auto offset = static_cast<std::size_t>(static_cast<std::byte*>(ptr) - base);
  auto live = live_.find(offset);
  // Interior, already freed, or (a second sim_free) already free-pending.
  if (live == live_.end() || live->second.free_pending != pending) return SIM_ERR_INVALID_POINTER;
  const std::size_t freed = live->second.rounded;
  live_.erase(live);
  bump_generation();
  used_ -= freed;
  std::size_t start = offset;
  std::size_t size = freed;
  // Coalesce with the free neighbours on both sides.
  auto next = free_blocks_.lower_bound(offset);
  if (next != free_blocks_.end() && next->first == start + size) {
    size += next->second;
    next = free_blocks_.erase(next);
  }
  if (next != free_blocks_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      free_blocks_.erase(prev);
    }
  }
  free_blocks_.emplace(start, size);
  if (freed >= kReturnPagesThreshold) return_pages(offset, freed);
  return SIMPLER_OK;
}

void DeviceArena::return_pages(std::size_t offset, std::size_t size) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t first = round_up(offset, page);
  const std::size_t last = (offset + size) / page * page;
  if (last > first)
    madvise(base_.load(std::memory_order_relaxed) + first, last - first, MADV_DONTNEED);
}

void DeviceArena::release_all() {
  std::lock_guard lock(mutex_);
  if (base_.load(std::memory_order_relaxed) == nullptr) return;
  live_.clear();
  bump_generation();
  free_blocks_.clear();
  free_blocks_.emplace(0, capacity_);
  used_ = 0;
  return_pages(0, capacity_);
}

bool DeviceArena::contains(const void* ptr) const {
  const std::byte* base = base_.load(std::memory_order_acquire);
  const auto* p = static_cast<const std::byte*>(ptr);
  return base != nullptr && p >= base && p < base + capacity_;
}

int DeviceArena::check_range(const void* ptr, std::size_t size, bool accept_free_pending) const {
  uint64_t base = 0;
  uint64_t length = 0;
  bool pending = false;
  if (int status = find(ptr, &base, &length, &pending); status != SIMPLER_OK) return status;
  if (pending && !accept_free_pending) return SIM_ERR_INVALID_POINTER;
  const uint64_t offset = reinterpret_cast<uintptr_t>(ptr) - base;
  if (size > length - offset) return SIM_ERR_OUT_OF_RANGE;
  return SIMPLER_OK;
}

int DeviceArena::find(const void* ptr, uint64_t* base, uint64_t* size, bool* free_pending) const {
  ArenaHitCache& cache = ArenaHitCache::mine();
  const auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ptr));
  if (const ArenaHit* hit =
          cache.find(instance_, generation_.load(std::memory_order_acquire), addr)) {
    *base = hit->base;
    *size = hit->size;
    *free_pending = hit->free_pending;
    return SIMPLER_OK;
  }
  std::lock_guard lock(mutex_);
  const int status = find_locked(ptr, base, size, free_pending);
  if (status == SIMPLER_OK) {
    // Read under the mutex, which every bump holds: the entry matches this table.
    cache.remember(ArenaHit{instance_, generation_.load(std::memory_order_relaxed), *base, *size,
                            *free_pending});
  }
  return status;
}

int DeviceArena::find_locked(const void* ptr, uint64_t* base, uint64_t* size,
                             bool* free_pending) const {
  if (!contains(ptr)) return SIM_ERR_INVALID_POINTER;
  std::byte* arena = base_.load(std::memory_order_relaxed);
  const auto offset = static_cast<std::size_t>(static_cast<const std::byte*>(ptr) - arena);
  auto it = live_.upper_bound(offset);
  if (it == live_.begin()) return SIM_ERR_INVALID_POINTER;
  --it;
  if (offset >= it->first + it->second.requested) return SIM_ERR_INVALID_POINTER;  // a gap
  *base = reinterpret_cast<uintptr_t>(arena + it->first);
  *size = it->second.requested;
  *free_pending = it->second.free_pending;
  return SIMPLER_OK;
}

uint64_t DeviceArena::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

}  // namespace simpler::sim
