// Tests of the tensor map's hash indexes (engine/tensor_map_index.h): the address index
// (and its remembered last lookup), the tile index and the task index (a direct slot per
// id, a hashed overflow for ids whose slot is taken) must find, insert and erase exactly
// like a std::unordered_map.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

#include "engine/tensor_map_index.h"

namespace simpler::rt {
namespace {

// Random inserts, finds and erases of keys from `key_of`, checked against a reference map.
template <typename Index, typename KeyOf>
void check_against_reference(Index& index, KeyOf key_of, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::unordered_map<uint64_t, uint32_t> ref;
  for (uint32_t step = 0; step < 20000; ++step) {
    const uint64_t key = key_of(rng() % 3000);
    switch (rng() % 4) {
      case 0:
        if (ref.count(key) == 0) {
          index.insert(key, step);
          ref[key] = step;
        }
        break;
      case 1: {
        const uint32_t got = index.find_or_insert(key, step);
        const auto it = ref.find(key);
        ASSERT_EQ(got, it == ref.end() ? Index::kNone : it->second);
        if (it == ref.end()) ref[key] = step;
        break;
      }
      case 2:
        index.erase(key);
        ref.erase(key);
        break;
      default: {
        const auto it = ref.find(key);
        ASSERT_EQ(index.find(key), it == ref.end() ? Index::kNone : it->second);
      }
    }
    ASSERT_EQ(index.size(), ref.size());
  }
  for (const auto& [key, value] : ref) ASSERT_EQ(index.find(key), value);
}

TEST(FlatIndex, AddressesAnswerLikeAMap) {
  FlatIndex index;
  check_against_reference(
      index, [](uint64_t k) { return 0x10000000 + k * 4096; }, 1);
}

// The remembered lookup must never answer for a key inserted or erased since: lookups of
// few keys (mostly the same one again) mixed with inserts and erases, against a map.
TEST(RecentIndex, ARememberedLookupFollowsInsertsAndErases) {
  RecentIndex index;
  std::unordered_map<uint64_t, uint32_t> ref;
  std::mt19937_64 rng(5);
  uint64_t key = 0x1000;
  for (uint32_t step = 0; step < 20000; ++step) {
    if (rng() % 4 == 0) key = 0x1000 * (1 + rng() % 6);  // else the same key again
    const auto it = ref.find(key);
    ASSERT_EQ(index.find(key), it == ref.end() ? RecentIndex::kNone : it->second) << step;
    switch (rng() % 3) {
      case 0:
        if (it == ref.end()) {
          index.insert(key, step);
          ref[key] = step;
        }
        break;
      case 1:
        index.erase(key);
        ref.erase(key);
        break;
      default:
        break;
    }
    ASSERT_EQ(index.size(), ref.size());
    if (step % 5000 == 4999) {
      index.clear();
      ref.clear();
    }
  }
}

// Records keyed by a value of their own, filed under a 32-bit hash that often collides:
// finds, inserts and erases against a map, through growth past the sparse limit (a
// quarter full below 4,096 slots, half full beyond) and back down to empty.
TEST(TaggedIndex, FindsItsRecordsThroughGrowthAndCollisions) {
  TaggedIndex index;
  std::unordered_map<uint32_t, uint32_t> ref;  // record -> hash
  std::vector<uint32_t> live;
  std::mt19937_64 rng(9);
  auto hash_of = [](uint32_t record) { return TaggedIndex::hash(record % 97, 0); };
  for (uint32_t step = 0; step < 40000; ++step) {
    const bool grow_phase = step < 30000;
    if (grow_phase ? rng() % 4 != 0 : rng() % 4 == 0) {
      const uint32_t record = step;
      index.insert(hash_of(record), record);
      ref[record] = hash_of(record);
      live.push_back(record);
    } else if (!live.empty()) {
      const size_t i = rng() % live.size();
      index.erase(ref[live[i]], live[i]);
      ref.erase(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
    ASSERT_EQ(index.size(), ref.size());
    const uint32_t probe = static_cast<uint32_t>(rng() % (step + 1));
    const uint32_t found =
        index.find(hash_of(probe), [&](uint32_t record) { return record == probe; });
    ASSERT_EQ(found, ref.count(probe) != 0 ? probe : TaggedIndex::kNone) << step;
  }
  for (uint32_t record : live) index.erase(ref[record], record);
  EXPECT_EQ(index.size(), 0u);
}

TEST(TaskIndex, AWindowOfConsecutiveIds) {
  TaskIndex index;
  for (uint64_t id = 0; id < 100000; ++id) {
    index.insert(id, static_cast<uint32_t>(id % 1000));
    if (id >= 3000) index.erase(id - 3000);  // a window of live tasks, retired in order
  }
  EXPECT_EQ(index.size(), 3000u);
  EXPECT_EQ(index.overflowed(), 0u);  // in-order tasks all keep their direct slots
  for (uint64_t id = 97000; id < 100000; ++id) ASSERT_EQ(index.find(id), id % 1000);
  EXPECT_EQ(index.find(96999), TaskIndex::kNone);
}

// Whatever the pattern of ids (dense, strided, sparse — all in one direct slot, so all but
// one overflow —, in a few runs), the index answers like a map.
TEST(TaskIndex, AnyIdsAnswerLikeAMap) {
  TaskIndex dense, strided, sparse, runs;
  check_against_reference(
      dense, [](uint64_t k) { return 200000 + k; }, 2);
  check_against_reference(
      strided, [](uint64_t k) { return k * 4; }, 3);
  check_against_reference(
      sparse, [](uint64_t k) { return k << 20; }, 4);
  check_against_reference(
      runs, [](uint64_t k) { return (k % 7) << 40 | k; }, 5);
}

// try_insert_direct files a key only where that is certain to be right without a probe
// (its direct slot free, no overflowed key counted by that slot, no growth needed), and
// find_direct sees only direct slots: the tensor map's inline filing of a new task relies
// on both.
TEST(TaskIndex, DirectFilingOnlyWhenCertain) {
  TaskIndex index;  // 64 direct slots: room for 16 ids
  EXPECT_TRUE(index.try_insert_direct(5, 50));
  EXPECT_EQ(index.find(5), 50u);
  EXPECT_EQ(index.find_direct(5), 50u);
  EXPECT_FALSE(index.try_insert_direct(5, 51));       // present: its slot is taken
  EXPECT_FALSE(index.try_insert_direct(5 + 64, 52));  // another id's slot
  EXPECT_EQ(index.find(5), 50u);
  EXPECT_EQ(index.find(5 + 64), TaskIndex::kNone);
  EXPECT_EQ(index.find_direct(6), TaskIndex::kNone);
  // An overflowed id: no direct filing in its slot until it is gone (the probe would be
  // needed), even once the slot's own id is gone; other slots file directly.
  index.insert(5 + 64, 53);
  ASSERT_EQ(index.overflowed(), 1u);
  EXPECT_EQ(index.find_direct(5 + 64), TaskIndex::kNone);
  index.erase(5);
  EXPECT_EQ(index.find(5 + 64), 53u);
  EXPECT_FALSE(index.try_insert_direct(5 + 64, 54));  // present, overflowed: must not file
  EXPECT_FALSE(index.try_insert_direct(5 + 128, 55));
  EXPECT_TRUE(index.try_insert_direct(7, 70));
  index.erase(5 + 64);
  EXPECT_EQ(index.overflowed(), 0u);
  EXPECT_TRUE(index.try_insert_direct(5 + 128, 55));
  index.erase(5 + 128);
  EXPECT_TRUE(index.try_insert_direct(5, 50));
  // Full enough to grow: refused, and nothing changed.
  for (uint64_t id = 8; index.size() < 16; ++id) ASSERT_TRUE(index.try_insert_direct(id, 1));
  EXPECT_FALSE(index.try_insert_direct(40, 2));
  EXPECT_EQ(index.size(), 16u);
  EXPECT_EQ(index.find(40), TaskIndex::kNone);
  index.insert(40, 2);  // (grows)
  EXPECT_EQ(index.find(40), 2u);
  EXPECT_EQ(index.find(5), 50u);
  EXPECT_EQ(index.find(7), 70u);
}

// The per-slot counts of overflowed ids through growth, erases and direct filing: ids from
// a few residues (most collide, many overflow) filed by try_insert_direct where it accepts
// and find_or_insert otherwise, as the tensor map files tasks, against a map.
TEST(TaskIndex, OverflowCountsKeepDirectFilingExact) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    TaskIndex index;
    std::mt19937_64 rng(seed);
    std::unordered_map<uint64_t, uint32_t> ref;
    for (uint32_t step = 0; step < 40000; ++step) {
      // Ids k * 64 + r for 6 residues r: 64-slot windows collide until the table is large.
      const uint64_t key = (rng() % (step < 20000 ? 400 : 60)) * 64 + rng() % 6 + seed * 1000;
      const auto it = ref.find(key);
      switch (rng() % 3) {
        case 0:
          if (index.try_insert_direct(key, step)) {
            ASSERT_TRUE(it == ref.end()) << step;  // never a second copy of a present id
            ref[key] = step;
          } else {
            ASSERT_EQ(index.find_or_insert(key, step),
                      it == ref.end() ? TaskIndex::kNone : it->second);
            if (it == ref.end()) ref[key] = step;
          }
          break;
        case 1:
          index.erase(key);
          if (it != ref.end()) ref.erase(it);
          break;
        default:
          ASSERT_EQ(index.find(key), it == ref.end() ? TaskIndex::kNone : it->second) << step;
      }
      ASSERT_EQ(index.size(), ref.size()) << step;
    }
    for (const auto& [key, value] : ref) ASSERT_EQ(index.find(key), value);
    for (const auto& [key, value] : ref) index.erase(key);
    EXPECT_EQ(index.size(), 0u);
    EXPECT_EQ(index.overflowed(), 0u);
  }
}

}  // namespace
}  // namespace simpler::rt
