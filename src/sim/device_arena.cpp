#include "device_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include "simpler/abi/status.h"

namespace simpler::sim {
namespace {

// Freed blocks at least this large hand their whole pages back to the OS, so a test that
// allocates and frees big buffers does not keep the RSS.
constexpr std::size_t kReturnPagesThreshold = std::size_t{1} << 20;

std::size_t round_up(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

}  // namespace

DeviceArena::DeviceArena(uint64_t capacity_bytes)
    : capacity_(capacity_bytes / kDeviceAlignment * kDeviceAlignment) {}

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
    live_.emplace(offset, Allocation{size, rounded});
    used_ += rounded;
    *out = base_.load(std::memory_order_relaxed) + offset;
    return SIMPLER_OK;
  }
  return SIM_ERR_OUT_OF_MEMORY;
}

int DeviceArena::release(void* ptr) {
  std::lock_guard lock(mutex_);
  std::byte* base = base_.load(std::memory_order_relaxed);
  if (base == nullptr || !contains(ptr)) return SIM_ERR_INVALID_POINTER;
  const auto offset = static_cast<std::size_t>(static_cast<std::byte*>(ptr) - base);
  auto live = live_.find(offset);
  if (live == live_.end()) return SIM_ERR_INVALID_POINTER;  // interior or already freed
  const std::size_t freed = live->second.rounded;
  live_.erase(live);
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

int DeviceArena::check_range(const void* ptr, std::size_t size) const {
  std::lock_guard lock(mutex_);
  if (!contains(ptr)) return SIM_ERR_INVALID_POINTER;
  const auto offset = static_cast<std::size_t>(static_cast<const std::byte*>(ptr) -
                                               base_.load(std::memory_order_relaxed));
  auto it = live_.upper_bound(offset);
  if (it == live_.begin()) return SIM_ERR_INVALID_POINTER;
  --it;
  const std::size_t end = it->first + it->second.requested;
  if (offset >= end) return SIM_ERR_INVALID_POINTER;  // in a free gap
  if (size > end - offset) return SIM_ERR_OUT_OF_RANGE;
  return SIMPLER_OK;
}

uint64_t DeviceArena::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

}  // namespace simpler::sim
