// Grids of intervals over many buffers: random streams whose tiles open on both sides of
// the opener, close, reopen at another opener and turn general must be answered exactly as
// by a map without grids (which the oracle tests check), access by access; interval
// lengths from 1 byte to 2^28 included. Retired at random or in id order with enough live
// entries for retire() to look ahead (a hint that must change no answer).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "engine/tensor_map.h"
#include "paired_maps.h"
#include "views.h"

namespace simpler::rt {
namespace {

using testing::make_view;

// Interval lengths in bytes per buffer: below the table's 2 bytes, small, odd, and at
// 2^28 - 4 / 2^28 (the largest with a table / the first without one).
constexpr int64_t kLens[] = {1, 2, 12, 64, 100, (int64_t{1} << 28) - 4, int64_t{1} << 28};
constexpr int kBuffers = 40;

// Tile k of buffer b's grid as uint8 bytes [base + k * len, + len): contiguous; as a
// reversed view (dense, not row-major) when its length allows; or a view off the grid.
ChipTensor view_of(std::mt19937_64& rng, uint64_t addr, int64_t len) {
  const int64_t base = int64_t{1} << 33;  // room for negative tile numbers
  const int64_t k = -12 + static_cast<int64_t>(rng() % 36);
  const int64_t lo = base + k * len;
  switch (rng() % 16) {
    case 0:  // off the grid: half a tile on
      return make_view(addr, uint64_t{1} << 40, lo + len / 2 + 1, {len}, {1}, CHIP_DT_UINT8);
    case 1:  // two tiles
      return make_view(addr, uint64_t{1} << 40, lo, {2 * len}, {1}, CHIP_DT_UINT8);
    case 2:
    case 3:  // the same bytes, reversed
      if (len % 4 == 0 && len <= 4096)
        return make_view(addr, uint64_t{1} << 40, (lo + len) / 4 - 1, {len / 4}, {-1});
      [[fallthrough]];
    default:
      return make_view(addr, uint64_t{1} << 40, lo, {len}, {1}, CHIP_DT_UINT8);
  }
}

// `keep_live`: live tasks before retiring; `in_order`: retire the oldest (else random
// ones). Sets `most_live` to the most live entries seen.
void run_stream(uint64_t seed, size_t capacity, size_t keep_live, bool in_order,
                size_t& most_live) {
  std::mt19937_64 rng(seed);
  TensorMap grids(capacity, TensorMap::kDefaultIndexAbove, true);
  TensorMap lanes(capacity, TensorMap::kDefaultIndexAbove, false);
  std::vector<uint64_t> live;
  size_t refused = 0, accepted = 0;
  most_live = 0;
  for (uint64_t task = 1; task <= 6000; ++task) {
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int a = 0; a < n; ++a) {
      const uint64_t b = rng() % kBuffers;
      const ChipTensor v = view_of(rng, (b + 1) << 40, kLens[b % std::size(kLens)]);
      const AccessKind kind = testing::random_access_kind(rng);
      bool og = false;
      ASSERT_TRUE(testing::same_access(grids, lanes, task, v, kind, rng() % 4 == 0, og));
      refused += !og;
      accepted += og;
      most_live = std::max(most_live, grids.live_entries());
    }
    live.push_back(task);
    // Sometimes in bursts that empty tiles and buffers.
    const size_t keep = rng() % 32 == 0 ? 0 : keep_live;
    while (live.size() > keep) {
      const size_t i = in_order ? 0 : rng() % live.size();
      grids.retire(live[i]);
      lanes.retire(live[i]);
      if (in_order) {
        live.erase(live.begin());
      } else {
        live[i] = live.back();
        live.pop_back();
      }
      if (rng() % 3 == 0) break;
    }
    ASSERT_EQ(grids.live_entries(), lanes.live_entries()) << "after retiring, task " << task;
  }
  EXPECT_GT(accepted, 0u);
  if (capacity < 64) {
    EXPECT_GT(refused, 0u);
  }
}

TEST(TensorMapGridMany, ManyBuffersAnswerExactlyAsTheLanes) {
  size_t most_live;
  for (uint64_t seed = 1; seed <= 3; ++seed) run_stream(seed, 1 << 16, 300, false, most_live);
}

TEST(TensorMapGridMany, InOrderRetiresWithManyLiveAnswerExactlyAsTheLanes) {
  size_t most_live;
  run_stream(7, 1 << 16, 2500, true, most_live);
  EXPECT_GT(most_live, 2048u);  // where retire() looks ahead
}

TEST(TensorMapGridMany, ManyBuffersNearlyFullAnswerExactlyAsTheLanes) {
  size_t most_live;
  run_stream(11, 40, 300, false, most_live);
}

}  // namespace
}  // namespace simpler::rt
