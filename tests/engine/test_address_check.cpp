// The address cache across runs (address_check.h): kept while nothing on the device is
// freed, forgotten at the first run's start after any free.
#include <gtest/gtest.h>

#include <string>

#include "engine/address_check.h"
#include "engine/view_cache.h"
#include "engine_test_support.h"
#include "one_dim_tensor.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::rt::testing {
namespace {

class AddressCheckTest : public EngineTest {};

TEST_F(AddressCheckTest, KeptAcrossRunsUntilSomethingOnTheDeviceIsFreed) {
  void* heap = nullptr;
  void* buffer = nullptr;
  void* unrelated = nullptr;
  ASSERT_EQ(sim_malloc(&heap, 4096), SIMPLER_OK);
  ASSERT_EQ(sim_malloc(&buffer, 4096), SIMPLER_OK);
  ASSERT_EQ(sim_malloc(&unrelated, 4096), SIMPLER_OK);
  const auto heap_base = reinterpret_cast<uint64_t>(heap);
  const auto addr = reinterpret_cast<uint64_t>(buffer);
  AddressCheck check(kDevice);
  EXPECT_FALSE(check.begin_run(heap_base, 4096));  // nothing to keep yet
  std::string why;
  ASSERT_TRUE(check.contains(addr, 4096, &why)) << why;  // asks the driver, then knows it
  EXPECT_TRUE(check.known(addr, 4096));
  // A later run, nothing freed: still known (no driver call needed).
  EXPECT_TRUE(check.begin_run(heap_base, 4096));
  EXPECT_TRUE(check.known(addr, 4096));
  // A different heap ring is a different engine state: forgotten.
  EXPECT_FALSE(check.begin_run(heap_base, 2048));
  EXPECT_FALSE(check.known(addr, 4096));
  ASSERT_TRUE(check.contains(addr, 4096, &why)) << why;
  EXPECT_TRUE(check.begin_run(heap_base, 2048));
  // Any free on the device, even of another allocation: forgotten at the next run.
  ASSERT_EQ(sim_free(unrelated), SIMPLER_OK);
  EXPECT_FALSE(check.begin_run(heap_base, 2048));
  EXPECT_FALSE(check.known(addr, 4096));
  EXPECT_TRUE(check.known(heap_base, 2048));  // the heap ring always is
  ASSERT_EQ(sim_free(buffer), SIMPLER_OK);
  ASSERT_EQ(sim_free(heap), SIMPLER_OK);
}

// One view in several allocations under one key (a kernel reading K, then V): every one
// stays until the set's ways are used up, the oldest goes first.
TEST(ViewCacheWays, OneViewInFourAllocationsStaysInOneSet) {
  ChipTensor t = one_dim_device_floats(4096, 4096);
  ViewCache cache;
  const uint32_t key = ViewCache::key(t, 3, 1);
  auto at = [&](uint64_t base) {
    ChipTensor v = t;
    v.buffer.addr = base;
    return v;
  };
  for (uint64_t i = 0; i < 5; ++i) {
    cache.add(at(8192 * (i + 1)), key, 8192 * (i + 1), 8192 * (i + 1) + 4096);
  }
  EXPECT_FALSE(cache.hit(at(8192), key));  // the oldest, replaced by the fifth
  for (uint64_t i = 1; i < 5; ++i) EXPECT_TRUE(cache.hit(at(8192 * (i + 1)), key)) << i;
  EXPECT_FALSE(cache.hit(at(8192 * 7), key));  // never kept
}

// The per-position slot (the entry a kernel's argument hit last) is tried before the
// hashed set: it answers exactly as the set does (another view at that position, or the
// same view after clear(), is not taken from it), and a view kept in the set is found
// from the slot's position again after the slot pointed elsewhere.
TEST(ViewCacheSlot, AnswersExactlyAsTheSetDoes) {
  const ChipTensor a = one_dim_device_floats(8192, 4096);
  ChipTensor b = a;
  b.shapes[0] = 512;  // half the buffer: another view of it, not kept
  ChipTensor c = one_dim_device_floats(16384, 2048);
  ViewCache cache;
  cache.add(a, ViewCache::key(a, 3, 1), 8192, 8192 + 4096);
  cache.add(c, ViewCache::key(c, 3, 1), 16384, 16384 + 2048);
  EXPECT_TRUE(cache.hit(a, 3, 1));   // from the set, the slot now names a's entry
  EXPECT_TRUE(cache.hit(a, 3, 1));   // from the slot
  EXPECT_FALSE(cache.hit(b, 3, 1));  // the slot's entry is a's: b is not a
  EXPECT_TRUE(cache.hit(c, 3, 1));   // a miss in the slot, a hit in the set
  EXPECT_TRUE(cache.hit(a, 3, 1));
  cache.clear();
  EXPECT_FALSE(cache.hit(a, 3, 1));  // the slot still names a's entry, now empty
  EXPECT_FALSE(cache.hit(c, 3, 1));
}

}  // namespace
}  // namespace simpler::rt::testing
