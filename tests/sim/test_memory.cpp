// Device memory: alignment, info, free errors, capacity, coalescing, copies and ranges.
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sim_test_support.h"

// From c_callers.c: C passes any int as an enum, C++ cannot without undefined behaviour.
extern "C" int memcpy_with_raw_kind(void* dst, const void* src, size_t size, int kind);
extern "C" int memcpy_async_with_raw_kind(void* dst, const void* src, size_t size, int kind,
                                          sim_stream_t stream);

namespace simpler::sim::test {
namespace {

using MemoryTest = SimTest;

size_t free_bytes_now() {
  size_t free_bytes = 0, total = 0;
  EXPECT_SIM_OK(sim_mem_get_info(&free_bytes, &total));
  return free_bytes;
}

TEST_F(MemoryTest, AllocationsAreAlignedToAtLeast1024Bytes) {
  for (size_t size : {size_t{1}, size_t{1000}, size_t{1025}, size_t{4096}, size_t{12345}}) {
    ScopedDeviceBuffer buffer(size);
    ASSERT_SIM_OK(buffer.status());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.get()) % 1024, 0u) << "size " << size;
  }
  void* ptr = reinterpret_cast<void*>(0x1);
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_malloc(&ptr, 0));
  EXPECT_EQ(ptr, nullptr);
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_malloc(nullptr, 1024));
}

TEST_F(MemoryTest, InfoTracksAllocationsPerDevice) {
  SimConfig config{};
  ASSERT_SIM_OK(sim_get_config(&config));
  size_t free_before = 0, total = 0;
  ASSERT_SIM_OK(sim_mem_get_info(&free_before, &total));
  EXPECT_EQ(total, config.device_memory_bytes);
  ASSERT_SIM_OK(sim_set_device(1));
  const size_t free_dev1_before = free_bytes_now();
  ASSERT_SIM_OK(sim_set_device(0));
  {
    ScopedDeviceBuffer buffer(3000);  // occupies 3 KiB
    ASSERT_SIM_OK(buffer.status());
    EXPECT_EQ(free_bytes_now(), free_before - 3072);
    ASSERT_SIM_OK(sim_set_device(1));
    EXPECT_EQ(free_bytes_now(), free_dev1_before);  // other device untouched
    ASSERT_SIM_OK(sim_set_device(0));
  }
  EXPECT_EQ(free_bytes_now(), free_before);
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_mem_get_info(nullptr, &total));
}

TEST_F(MemoryTest, FreeRefusesDoubleForeignAndInteriorPointers) {
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 4096));
  int on_stack = 0;
  std::vector<char> on_heap(16);
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_free(static_cast<char*>(ptr) + 1));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_free(static_cast<char*>(ptr) + 1024));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_free(&on_stack));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_free(on_heap.data()));
  ASSERT_SIM_OK(sim_free(ptr));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_free(ptr));
  EXPECT_SIM_OK(sim_free(nullptr));  // like free(NULL)
}

TEST_F(MemoryTest, OutOfCapacityThenFreedMemoryIsReusable) {
  const size_t available = free_bytes_now() / 1024 * 1024;
  void* too_much = nullptr;
  EXPECT_STATUS(SIM_ERR_OUT_OF_MEMORY, sim_malloc(&too_much, available + 1));
  EXPECT_EQ(too_much, nullptr);
  const size_t half = available / 2 / 1024 * 1024;
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_SIM_OK(sim_malloc(&a, half));
  ASSERT_SIM_OK(sim_malloc(&b, half));
  void* c = nullptr;
  EXPECT_STATUS(SIM_ERR_OUT_OF_MEMORY, sim_malloc(&c, available - 2 * half + 1024));
  ASSERT_SIM_OK(sim_free(a));
  ASSERT_SIM_OK(sim_malloc(&c, half));  // reuses a's block
  ASSERT_SIM_OK(sim_free(b));
  ASSERT_SIM_OK(sim_free(c));
}

TEST_F(MemoryTest, FreedNeighboursCoalesceIntoOneBlock) {
  const size_t available = free_bytes_now() / 1024 * 1024;
  const size_t third = available / 3 / 1024 * 1024;
  void* parts[3] = {};
  for (auto& p : parts) ASSERT_SIM_OK(sim_malloc(&p, third));
  // Free the outer blocks first: the middle one must merge with both sides.
  ASSERT_SIM_OK(sim_free(parts[0]));
  ASSERT_SIM_OK(sim_free(parts[2]));
  ASSERT_SIM_OK(sim_free(parts[1]));
  void* whole = nullptr;
  ASSERT_SIM_OK(sim_malloc(&whole, available));
  ASSERT_SIM_OK(sim_free(whole));
}

TEST_F(MemoryTest, CopiesRoundTripAndRangesAreChecked) {
  ScopedDeviceBuffer a(1000), b(1000);
  ASSERT_SIM_OK(a.status());
  ASSERT_SIM_OK(b.status());
  std::vector<unsigned char> host(1000), back(1000, 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i);
  ASSERT_SIM_OK(sim_memcpy(a.get(), host.data(), 1000, SIM_MEMCPY_HOST_TO_DEVICE));
  ASSERT_SIM_OK(sim_memcpy(b.get(), a.get(), 1000, SIM_MEMCPY_DEVICE_TO_DEVICE));
  ASSERT_SIM_OK(sim_memset(b.bytes() + 10, 0xAB, 5));
  ASSERT_SIM_OK(sim_memcpy(back.data(), b.get(), 1000, SIM_MEMCPY_DEVICE_TO_HOST));
  for (size_t i = 0; i < 1000; ++i) {
    const unsigned char expected = (i >= 10 && i < 15) ? 0xAB : static_cast<unsigned char>(i);
    ASSERT_EQ(back[i], expected) << "byte " << i;
  }
  // The requested size bounds the range, not the 1024-byte rounding.
  EXPECT_STATUS(SIM_ERR_OUT_OF_RANGE, sim_memset(a.get(), 0, 1001));
  EXPECT_STATUS(SIM_ERR_OUT_OF_RANGE,
                sim_memcpy(a.bytes() + 500, host.data(), 501, SIM_MEMCPY_HOST_TO_DEVICE));
  EXPECT_STATUS(SIM_ERR_OUT_OF_RANGE,
                sim_memcpy(back.data(), b.bytes() + 1, 1000, SIM_MEMCPY_DEVICE_TO_HOST));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER,
                sim_memcpy(host.data(), back.data(), 10, SIM_MEMCPY_HOST_TO_DEVICE));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER,
                sim_memcpy(a.get(), host.data(), 10, SIM_MEMCPY_DEVICE_TO_DEVICE));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, memcpy_with_raw_kind(a.get(), host.data(), 10, 7));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE,
                memcpy_async_with_raw_kind(a.get(), host.data(), 10, -1, nullptr));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_memcpy(a.get(), nullptr, 10, SIM_MEMCPY_HOST_TO_DEVICE));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_memset(nullptr, 0, 10));
  EXPECT_SIM_OK(sim_memcpy(a.get(), host.data(), 0, SIM_MEMCPY_HOST_TO_DEVICE));
  EXPECT_SIM_OK(sim_memset(a.get(), 0, 0));
}

TEST_F(MemoryTest, FreedMemoryIsNoLongerAddressable) {
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 2048));
  ASSERT_SIM_OK(sim_free(ptr));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_memset(ptr, 0, 16));
  int32_t device = -1;
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_pointer_device(ptr, 16, &device));
}

// Range checks answer from a per-thread cache of earlier hits (arena_hit_cache.h): a free,
// a free-pending mark or a smaller allocation at the same address must be seen at once,
// on the checking thread and on any other thread that cached the old allocation.
TEST_F(MemoryTest, RangeChecksSeeFreesAfterAnEarlierHit) {
  int32_t device = -1;
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 8192));
  ASSERT_SIM_OK(sim_pointer_device(ptr, 8192, &device));  // cached now
  std::thread other([&] { EXPECT_SIM_OK(sim_pointer_device(ptr, 8192, &device)); });
  other.join();
  ASSERT_SIM_OK(sim_free(ptr));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_pointer_device(ptr, 16, &device));
  std::thread after(
      [&] { EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_pointer_device(ptr, 16, &device)); });
  after.join();
  // A smaller allocation at the same address (first fit reuses it): the old size is gone.
  void* again = nullptr;
  ASSERT_SIM_OK(sim_malloc(&again, 1024));
  if (again == ptr) {
    EXPECT_SIM_OK(sim_pointer_device(again, 1024, &device));
    EXPECT_STATUS(SIM_ERR_OUT_OF_RANGE, sim_pointer_device(again, 8192, &device));
  }
  // A stream-ordered free (queued work still pending) refuses new uses at once.
  sim_stream_t stream = nullptr;
  ASSERT_SIM_OK(sim_stream_create(&stream));
  std::atomic<bool> release{false};
  ASSERT_SIM_OK(sim_launch_host_func(
      stream,
      [](void* flag) {
        while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
      },
      &release));
  ASSERT_SIM_OK(sim_pointer_device(again, 1024, &device));  // cached again
  ASSERT_SIM_OK(sim_free(again));                           // pending: the stream is busy
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_pointer_device(again, 16, &device));
  release.store(true);
  EXPECT_SIM_OK(sim_stream_synchronize(stream));
  EXPECT_SIM_OK(sim_stream_destroy(stream));
}

TEST_F(MemoryTest, PointerDeviceValidatesTheRange) {
  ASSERT_SIM_OK(sim_set_device(1));
  ScopedDeviceBuffer buffer(4096);
  ASSERT_SIM_OK(buffer.status());
  ASSERT_SIM_OK(sim_set_device(0));
  int32_t device = -1;
  ASSERT_SIM_OK(sim_pointer_device(buffer.get(), 4096, &device));
  EXPECT_EQ(device, 1);
  device = -1;
  ASSERT_SIM_OK(sim_pointer_device(buffer.bytes() + 100, 3996, &device));
  EXPECT_EQ(device, 1);
  EXPECT_STATUS(SIM_ERR_OUT_OF_RANGE, sim_pointer_device(buffer.bytes() + 100, 3997, &device));
  int local = 0;
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_pointer_device(&local, 4, &device));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_pointer_device(nullptr, 4, &device));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_pointer_device(buffer.get(), 4, nullptr));
}

TEST_F(MemoryTest, FreeFindsTheOwningDeviceWhateverIsCurrent) {
  ASSERT_SIM_OK(sim_set_device(2));
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 1024));
  ASSERT_SIM_OK(sim_set_device(0));
  EXPECT_SIM_OK(sim_free(ptr));
  int32_t device = -1;
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_pointer_device(ptr, 1, &device));
}

TEST_F(MemoryTest, ConcurrentAllocationIsThreadSafe) {
  const size_t free_before = free_bytes_now();
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      if (sim_set_device(0) != SIMPLER_OK) {
        failures[static_cast<size_t>(t)] = 1;
        return;
      }
      std::vector<void*> held;
      for (int i = 0; i < 200; ++i) {
        void* p = nullptr;
        if (sim_malloc(&p, static_cast<size_t>(1024 * (1 + (i % 5)))) != SIMPLER_OK) {
          failures[static_cast<size_t>(t)] = 2;
          break;
        }
        std::memset(p, t, 1024);
        held.push_back(p);
        if (i % 3 == 0) {
          if (sim_free(held.front()) != SIMPLER_OK) failures[static_cast<size_t>(t)] = 3;
          held.erase(held.begin());
        }
      }
      for (void* p : held)
        if (sim_free(p) != SIMPLER_OK) failures[static_cast<size_t>(t)] = 4;
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
  EXPECT_EQ(free_bytes_now(), free_before);
}

// The memory generation a launch trusts its earlier range checks by: every way an
// allocation stops being valid for new work changes it, an allocation does not.
TEST_F(MemoryTest, MemoryGenerationChangesOnEveryFreeAndResetButNotOnMalloc) {
  ASSERT_SIM_OK(sim_set_device(1));
  uint64_t g0 = 0;
  uint64_t g = 0;
  ASSERT_SIM_OK(sim_device_memory_generation(1, &g0));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_device_memory_generation(1, nullptr));
  EXPECT_NE(SIMPLER_OK, sim_device_memory_generation(-1, &g));
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_SIM_OK(sim_malloc(&a, 4096));
  ASSERT_SIM_OK(sim_malloc(&b, 4096));
  ASSERT_SIM_OK(sim_device_memory_generation(1, &g));
  EXPECT_EQ(g, g0) << "an allocation cannot invalidate an earlier range check";
  ASSERT_SIM_OK(sim_free(a));
  uint64_t after_free = 0;
  ASSERT_SIM_OK(sim_device_memory_generation(1, &after_free));
  EXPECT_NE(after_free, g0);
  // A stream-ordered free changes it at once (the pointer is invalid for new work), and
  // again when its memory is released.
  sim_stream_t stream = nullptr;
  ASSERT_SIM_OK(sim_stream_create(&stream));
  std::atomic<bool> release{false};
  ASSERT_SIM_OK(sim_launch_host_func(
      stream,
      [](void* flag) {
        while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
      },
      &release));
  ASSERT_SIM_OK(sim_free(b));
  uint64_t after_pending = 0;
  ASSERT_SIM_OK(sim_device_memory_generation(1, &after_pending));
  EXPECT_NE(after_pending, after_free);
  release.store(true);
  ASSERT_SIM_OK(sim_stream_synchronize(stream));
  ASSERT_SIM_OK(sim_stream_destroy(stream));
  // A reset changes it, even of a device whose memory was never touched.
  ASSERT_SIM_OK(sim_device_memory_generation(1, &g));
  ASSERT_SIM_OK(sim_device_reset(1));
  uint64_t after_reset = 0;
  ASSERT_SIM_OK(sim_device_memory_generation(1, &after_reset));
  EXPECT_NE(after_reset, g);
  ASSERT_SIM_OK(sim_device_memory_generation(3, &g));
  ASSERT_SIM_OK(sim_device_reset(3));
  ASSERT_SIM_OK(sim_device_memory_generation(3, &after_reset));
  EXPECT_NE(after_reset, g);
  ASSERT_SIM_OK(sim_set_device(0));
}

// THPeligible of the mapping holding `addr` in /proc/self/smaps (-1 if not shown).
int thp_eligible_at(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  const auto where = reinterpret_cast<uintptr_t>(addr);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    int value = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2) {
      inside = lo <= where && where < hi;  // a mapping's header line
    } else if (inside && std::sscanf(line.c_str(), "THPeligible: %d", &value) == 1) {
      return value;
    }
  }
  return -1;
}

bool transparent_huge_pages_available() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(enabled, modes);
  return !modes.empty() && modes.find("[never]") == std::string::npos;
}

TEST_F(MemoryTest, LargeBuffersAskForHugePages) {
  // A 64 MiB peer copy over 4 KiB pages took ~3x as long as over 2 MiB pages (level 4).
  if (!transparent_huge_pages_available()) GTEST_SKIP() << "transparent huge pages are off";
  ScopedDeviceBuffer small(64 << 10);
  ScopedDeviceBuffer large(size_t{16} << 20);
  ASSERT_SIM_OK(small.status());
  ASSERT_SIM_OK(large.status());
  const auto* middle = static_cast<const char*>(large.get()) + (size_t{8} << 20);
  const int large_eligible = thp_eligible_at(middle);
  if (large_eligible < 0) GTEST_SKIP() << "this kernel's smaps shows no THPeligible";
  EXPECT_EQ(large_eligible, 1);
  std::memset(large.get(), 1, size_t{16} << 20);  // still plain memory
  EXPECT_EQ(static_cast<const char*>(large.get())[(size_t{16} << 20) - 1], 1);
}

}  // namespace
}  // namespace simpler::sim::test
