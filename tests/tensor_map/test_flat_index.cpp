// Tests of the tensor map's hash indexes (engine/tensor_map_index.h): the task index keeps
// consecutive ids in place and falls back to hashing when ids pile up; both kinds must
// find, insert and erase exactly like a std::unordered_map.
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
  check_against_reference(index, [](uint64_t k) { return 0x10000000 + k * 4096; }, 1);
}

TEST(TaskIndex, ConsecutiveIdsStayInPlace) {
  TaskIndex index;
  for (uint64_t id = 0; id < 100000; ++id) {
    index.insert(id, static_cast<uint32_t>(id % 1000));
    if (id >= 3000) index.erase(id - 3000);  // a window of live tasks, retired in order
  }
  EXPECT_TRUE(index.keys_in_place());
  EXPECT_EQ(index.size(), 3000u);
  for (uint64_t id = 97000; id < 100000; ++id) ASSERT_EQ(index.find(id), id % 1000);
  EXPECT_EQ(index.find(96999), TaskIndex::kNone);
  index.clear();
  check_against_reference(index, [](uint64_t k) { return 200000 + k; }, 2);
  EXPECT_TRUE(index.keys_in_place());
}

TEST(TaskIndex, IdsThatPileUpFallBackToHashing) {
  TaskIndex index;
  check_against_reference(index, [](uint64_t k) { return k << 20; }, 3);
  EXPECT_FALSE(index.keys_in_place());
  index.clear();
  EXPECT_TRUE(index.keys_in_place());
  EXPECT_EQ(index.size(), 0u);
  check_against_reference(index, [](uint64_t k) { return (k % 7) << 40 | k; }, 4);
}

}  // namespace
}  // namespace simpler::rt
