// The submit path's inline shortcuts must never accept what the reference checks refuse:
// device_tensor_quick_ok (tensor_shape.h) against check_device_tensor, the cache of views
// already checked (view_cache.h) against device_tensor_quick_ok, and the byte ring's
// masked wrap (byte_ring.h) against the modulo arithmetic it replaces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "engine/byte_ring.h"
#include "engine/tensor_shape.h"
#include "engine/view_cache.h"
#include "one_dim_tensor.h"
#include "simpler/task/task_interface.h"

namespace simpler::rt {
namespace {

// Values near the edges that matter: zero, small, negative, near the overflow limits.
int64_t edgy(std::mt19937_64& rng) {
  static const int64_t kValues[] = {0,
                                    1,
                                    2,
                                    3,
                                    7,
                                    64,
                                    -1,
                                    -2,
                                    1 << 20,
                                    INT64_MAX,
                                    INT64_MAX / 2,
                                    INT64_MIN,
                                    int64_t{1} << 31,
                                    int64_t{1} << 40};
  if (rng() % 3 == 0) return static_cast<int64_t>(rng() % 100);
  return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
}

ChipTensor random_tensor(std::mt19937_64& rng) {
  ChipTensor t{};
  static const uint64_t kAddrs[] = {0, 64, 4096, UINT64_MAX - 8, uint64_t{1} << 47};
  t.buffer.addr = kAddrs[rng() % 5];
  t.buffer.size = rng() % 2 == 0 ? rng() % 4096 : static_cast<uint64_t>(edgy(rng));
  t.start_offset = rng() % 2 == 0 ? static_cast<int64_t>(rng() % 64) : edgy(rng);
  t.ndims = static_cast<uint32_t>(rng() % (CHIP_TENSOR_MAX_DIMS + 2));
  t.dtype = static_cast<uint32_t>(rng() % (CHIP_DT_COUNT + 2));
  t.space = rng() % 4 == 0 ? CHIP_SPACE_HOST : (rng() % 10 == 0 ? 7 : CHIP_SPACE_DEVICE);
  for (uint32_t d = 0; d < CHIP_TENSOR_MAX_DIMS; ++d) {
    t.shapes[d] = rng() % 2 == 0 ? static_cast<int64_t>(rng() % 8) : edgy(rng);
    t.strides[d] = rng() % 2 == 0 ? static_cast<int64_t>(rng() % 16) : edgy(rng);
  }
  return t;
}

TEST(HotPathChecks, QuickTensorCheckNeverAcceptsWhatTheReferenceRefuses) {
  std::mt19937_64 rng(20261203);
  uint64_t accepted = 0;
  for (int i = 0; i < 50000; ++i) {
    const ChipTensor t = random_tensor(rng);
    std::string why;
    const bool reference = check_device_tensor(t, &why);
    if (device_tensor_quick_ok(t)) {
      ++accepted;
      EXPECT_TRUE(reference) << "quick check accepted a tensor the reference refuses: " << why;
    }
  }
  EXPECT_GT(accepted, 250u);  // the shortcut does take the common case
}

TEST(HotPathChecks, QuickTensorCheckTakesOrdinaryViews) {
  ChipTensor t{};
  t.buffer.addr = 4096;
  t.buffer.size = 64 * 64 * 4;
  t.ndims = 2;
  t.dtype = CHIP_DT_FLOAT32;
  t.space = CHIP_SPACE_DEVICE;
  t.shapes[0] = 64;
  t.shapes[1] = 64;
  t.strides[0] = 64;
  t.strides[1] = 1;
  EXPECT_TRUE(device_tensor_quick_ok(t));
  t.start_offset = 1;  // one element past the end
  EXPECT_FALSE(device_tensor_quick_ok(t));
  t.start_offset = 0;
  t.space = CHIP_SPACE_HOST;
  EXPECT_FALSE(device_tensor_quick_ok(t));
}

TEST(HotPathChecks, QuickTensorCheckElementSizesMatchTheDataTypes) {
  for (uint32_t dtype = 0; dtype < CHIP_DT_COUNT; ++dtype) {
    ChipTensor t{};
    t.buffer.addr = 4096;
    t.ndims = 1;
    t.dtype = dtype;
    t.space = CHIP_SPACE_DEVICE;
    t.shapes[0] = 1;
    t.strides[0] = 1;
    const auto size = static_cast<uint64_t>(element_size(static_cast<DataType>(dtype)));
    t.buffer.size = size;
    EXPECT_TRUE(device_tensor_quick_ok(t)) << "dtype " << dtype;
    t.buffer.size = size - 1;
    EXPECT_FALSE(device_tensor_quick_ok(t)) << "dtype " << dtype;
  }
}

// a + b wrapping around (an edge value plus one must not be undefined behaviour).
int64_t plus(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// One field of `t` changed to an edge value (the cache's key, or the offset it ranges over).
ChipTensor mutated(ChipTensor t, std::mt19937_64& rng) {
  const uint32_t d = static_cast<uint32_t>(rng() % CHIP_TENSOR_MAX_DIMS);
  switch (rng() % 8) {
    case 0:
      t.buffer.size =
          rng() % 2 == 0 ? t.buffer.size + rng() % 9 - 4 : static_cast<uint64_t>(edgy(rng));
      break;
    case 1:
      t.buffer.addr = rng() % 4 == 0 ? 0 : t.buffer.addr + rng() % 129 - 64;
      break;
    case 2:
      t.ndims = static_cast<uint32_t>(rng() % (CHIP_TENSOR_MAX_DIMS + 2));
      break;
    case 3:
      t.dtype = static_cast<uint32_t>(rng() % (CHIP_DT_COUNT + 2));
      break;
    case 4:
      t.space = static_cast<uint32_t>(rng() % 3);
      break;
    case 5:
      t.shapes[d] = rng() % 2 == 0 ? plus(t.shapes[d], 1) : edgy(rng);
      break;
    case 6:
      t.strides[d] = rng() % 2 == 0 ? plus(t.strides[d], 1) : edgy(rng);
      break;
    default:  // the offset: near the accepted one, or anywhere
      t.start_offset = rng() % 2 == 0
                           ? plus(t.start_offset, static_cast<int64_t>(rng() % 2049) - 1024)
                           : edgy(rng);
      break;
  }
  return t;
}

// A view the cache keeps must never make it accept a descriptor quick_ok refuses or a
// buffer outside the allocation it was kept with (a stale or too wide entry), and for the
// key it keeps it takes every address and offset that pass both.
TEST(HotPathChecks, ViewCacheNeverAcceptsWhatTheQuickCheckRefuses) {
  std::mt19937_64 rng(20261204);
  uint64_t kept = 0;
  uint64_t hits = 0;
  for (int i = 0; i < 20000; ++i) {
    ChipTensor t = random_tensor(rng);
    if (i % 2 == 0) {  // an ordinary view, so that many are kept
      t.buffer.addr = 4096;
      t.buffer.size = rng() % 2 == 0 ? 4096 : static_cast<uint64_t>(edgy(rng));
      t.space = CHIP_SPACE_DEVICE;
      t.dtype = static_cast<uint32_t>(rng() % CHIP_DT_COUNT);
      t.ndims = 1 + static_cast<uint32_t>(rng() % CHIP_TENSOR_MAX_DIMS);
    }
    if (!device_tensor_quick_ok(t)) continue;
    // The allocation the buffer lies in: up to 32 bytes more on either side.
    const uint64_t below = std::min<uint64_t>(t.buffer.addr, rng() % 33);
    const uint64_t end = t.buffer.addr + t.buffer.size;
    const uint64_t above = std::min<uint64_t>(UINT64_MAX - end, rng() % 33);
    const uint64_t begin = t.buffer.addr - below;
    const uint64_t alloc_end = end + above;
    auto inside = [&](const ChipTensor& p) {
      return p.buffer.addr >= begin && p.buffer.addr <= alloc_end &&
             p.buffer.size <= alloc_end - p.buffer.addr;
    };
    ViewCache cache;
    cache.clear();
    const uint32_t arg = static_cast<uint32_t>(rng() % 8);
    cache.add(t, arg, begin, alloc_end);
    bool nonempty = true;
    for (uint32_t d = 0; d < t.ndims; ++d) nonempty = nonempty && t.shapes[d] != 0;
    EXPECT_EQ(cache.hit(t, arg), nonempty);  // empty views are not kept
    kept += nonempty ? 1 : 0;
    for (int j = 0; j < 40; ++j) {
      const ChipTensor probe = mutated(t, rng);
      const bool quick = device_tensor_quick_ok(probe);
      const bool hit = cache.hit(probe, arg);
      hits += hit ? 1 : 0;
      EXPECT_TRUE(!hit || (quick && inside(probe)))
          << "the cache accepted a view quick_ok or the allocation refuses (case " << i << ")";
      ChipTensor same_key = t;  // only the address or offset differs: take what passes both
      same_key.buffer.addr = probe.buffer.addr;
      same_key.start_offset = probe.start_offset;
      if (nonempty && quick && inside(probe) && std::memcmp(&same_key, &probe, sizeof probe) == 0) {
        EXPECT_TRUE(hit) << "a view that passes both was missed (case " << i << ")";
      }
    }
    cache.clear();
    EXPECT_FALSE(cache.hit(t, arg));
  }
  EXPECT_GT(kept, 1500u);
  EXPECT_GT(hits, 20000u);
}

// A forgotten (or never used) entry matches no descriptor: not an all-zero one, nor a
// rank-0 one whose other fields equal what a forgotten entry kept (both are invalid, and
// the allocation a forgotten entry names may have been freed since).
TEST(HotPathChecks, AForgottenViewMatchesNoDescriptor) {
  ViewCache cache;
  const ChipTensor zero{};
  for (uint32_t arg = 0; arg < 8; ++arg) EXPECT_FALSE(cache.hit(zero, arg)) << arg;
  ChipTensor t = testing::one_dim_device_floats(4096, 4096);
  ASSERT_TRUE(device_tensor_quick_ok(t));
  cache.add(t, 0, 4096, 8192);
  ASSERT_TRUE(cache.hit(t, 0));
  ChipTensor rank0 = t;
  rank0.ndims = 0;
  EXPECT_FALSE(cache.hit(rank0, 0));
  cache.clear();
  EXPECT_FALSE(cache.hit(t, 0));
  EXPECT_FALSE(cache.hit(rank0, 0));
  EXPECT_FALSE(cache.hit(zero, 0));
}

// The same allocation sequence on a power-of-two ring (masked wrap) and a reference
// computed with modulo arithmetic give the same offsets.
TEST(HotPathChecks, ByteRingMaskedWrapMatchesModulo) {
  for (uint64_t capacity : {uint64_t{4096}, uint64_t{3072}}) {
    ByteRing ring;
    ring.reset(capacity);
    std::mt19937_64 rng(7);
    uint64_t head = 0;
    uint64_t tail = 0;
    uint64_t pending[64];
    uint64_t first = 0;
    uint64_t count = 0;
    for (int i = 0; i < 20000; ++i) {
      const uint64_t size = 1 + rng() % 700;
      // The reference: ByteRing's documented arithmetic with % everywhere.
      uint64_t rhead = head;
      uint64_t rtail = tail;
      if (rhead == rtail) rhead = rtail = (rhead + capacity - 1) / capacity * capacity;
      const uint64_t pos = rhead % capacity;
      const uint64_t pad = (64 - pos % 64) % 64;
      uint64_t start = rhead + pad;
      if (pos + pad + size > capacity) start = rhead + (capacity - pos);
      const bool fits = start + size - rtail <= capacity;
      uint64_t offset = 0;
      uint64_t end = 0;
      ASSERT_EQ(ring.try_alloc(size, 64, &offset, &end), fits) << "capacity " << capacity;
      if (fits) {
        head = start + size;
        tail = rtail;
        ASSERT_EQ(offset, start % capacity);
        ASSERT_EQ(end, head);
        pending[(first + count++) % 64] = end;
      }
      if (count == 64 || (!fits && count > 0) || (count > 0 && rng() % 3 == 0)) {
        tail = pending[first++ % 64];
        --count;
        ring.release_to(tail);
      }
    }
  }
}

}  // namespace
}  // namespace simpler::rt
