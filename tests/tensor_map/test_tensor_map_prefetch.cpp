// TensorMap::prefetch is a hint: with it before every task (well-formed views and
// garbage alike), the map gives exactly the edges it gives without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/tensor_map.h"
#include "views.h"

namespace simpler::rt {
namespace {

using testing::make_view;
using testing::slice1d;

// Descriptors no lookup could use: bad dtype and ranks, starts that wrap, no buffer.
std::vector<ChipTensor> garbage() {
  std::vector<ChipTensor> g;
  g.push_back(make_view(0x5000, 64, 0, {4}, {1}, 999));
  g.push_back(make_view(0x5000, 64, INT64_MIN, {4}, {1}));
  g.push_back(make_view(UINT64_MAX, 64, INT64_MAX, {-1}, {0}));
  g.push_back(make_view(0, 0, -7, {2, 3, 4, 5, 6}, {1, 1, 1, 1, 1}, CHIP_DT_FLOAT64));
  ChipTensor no_dims{};
  no_dims.ndims = 77;
  no_dims.dtype = UINT32_MAX;
  g.push_back(no_dims);
  return g;
}

// Random slices of 1,000 buffers (enough tiles that the tile index leaves L1, where the
// hint does its work) and 2-D tiles of one matrix, three accesses a task, a window of 3,000.
TEST(TensorMapPrefetch, AHintChangesNoEdge) {
  TensorMap hinted(1 << 16);
  TensorMap plain(1 << 16);
  std::mt19937_64 rng(11);
  const std::vector<ChipTensor> bad = garbage();
  std::vector<uint64_t> dh, dp;
  constexpr uint64_t kWindow = 3000;
  for (uint64_t t = 0; t < 20000; ++t) {
    ChipTensor views[3];
    AccessKind kinds[3];
    for (int k = 0; k < 3; ++k) {
      const uint64_t r = rng();
      if (r % 8 == 0) {
        const int64_t row = static_cast<int64_t>(r >> 8) % 8,
                      col = static_cast<int64_t>(r >> 16) % 8;
        views[k] = testing::tile(0x9000000, 512, row * 64, col * 64, 64, 64);
      } else {
        const int64_t i = static_cast<int64_t>((r >> 8) % 10) * 256;
        views[k] = slice1d(0x1000000 + ((r >> 16) % 1000) * 0x4000, i, i + 256);
      }
      kinds[k] = k == 2 ? AccessKind::Write : AccessKind::Read;
    }
    hinted.prefetch(views, 3);
    if (t % 16 == 0) hinted.prefetch(bad.data(), bad.size());
    if (t % 97 == 0) hinted.prefetch(nullptr, 0);
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(hinted.access(t, views[k], kinds[k], dh));
      ASSERT_TRUE(plain.access(t, views[k], kinds[k], dp));
      std::sort(dh.begin(), dh.end());
      std::sort(dp.begin(), dp.end());
      ASSERT_EQ(dh, dp) << "task " << t << " access " << k;
      dh.clear();
      dp.clear();
    }
    if (t >= kWindow) {
      hinted.retire(t - kWindow);
      plain.retire(t - kWindow);
    }
    ASSERT_EQ(hinted.live_entries(), plain.live_entries());
  }
  // A hint on the empty map (and more views than a task's usual count) is harmless too.
  hinted.clear();
  std::vector<ChipTensor> many(20, slice1d(0x1000000, 0, 256));
  hinted.prefetch(many.data(), many.size());
  EXPECT_EQ(hinted.live_entries(), 0u);
}

}  // namespace
}  // namespace simpler::rt
