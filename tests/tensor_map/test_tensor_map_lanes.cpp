// Tests of the tensor map's column-band lanes: the entries of one buffer are split by the
// exact column band (row pitch + byte columns) of their views, so that a tile only meets
// the records of its own band. The answers must not depend on that split: bands that
// partly overlap, other pitches, views outside the band model, more bands than a buffer
// has lanes for, readers left in a lane that changed band, and lanes released and reused.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "engine/tensor_map.h"
#include "views.h"

namespace simpler::rt {
namespace {

using testing::make_view;
using testing::slice1d;
using testing::tile;

constexpr uint64_t kA = 0x100000;
using Ids = std::set<uint64_t>;

std::set<uint64_t> deps_of(TensorMap& map, uint64_t task, const ChipTensor& view, AccessKind kind) {
  std::vector<uint64_t> deps;
  EXPECT_TRUE(map.access(task, view, kind, deps));
  return {deps.begin(), deps.end()};
}

// Both the linear scan and the interval trees (index_above 0 and 2) behind the lanes, with
// the buffers whose views are tiles of one grid looked up by tile until a view leaves the
// grid (grids), and with every buffer on the lanes from the start.
struct Mode {
  size_t index_above;
  bool grids;
};
const Mode kModes[] = {{TensorMap::kDefaultIndexAbove, true},  {0, true},  {2, true},
                       {TensorMap::kDefaultIndexAbove, false}, {0, false}, {2, false}};

TEST(TensorMapLanes, PartlyOverlappingBandsSeeEachOther) {
  for (const Mode& mode : kModes) {
    TensorMap map(256, mode.index_above, mode.grids);
    EXPECT_EQ(deps_of(map, 1, tile(kA, 512, 0, 0, 64, 64), AccessKind::Write), Ids{});
    EXPECT_EQ(deps_of(map, 2, tile(kA, 512, 0, 32, 64, 64), AccessKind::Write), Ids{1});
    EXPECT_EQ(deps_of(map, 3, tile(kA, 512, 10, 80, 2, 10), AccessKind::Read), Ids{2});
    EXPECT_EQ(deps_of(map, 4, tile(kA, 512, 10, 10, 2, 10), AccessKind::Read), Ids{1});
    EXPECT_EQ(deps_of(map, 5, tile(kA, 512, 10, 40, 2, 10), AccessKind::Read), (Ids{1, 2}));
    // Columns 44..67 of rows 0..63: a third band, meeting both writers and reader 5.
    EXPECT_EQ(deps_of(map, 6, tile(kA, 512, 0, 44, 64, 24), AccessKind::Write), (Ids{1, 2, 5}));
    EXPECT_EQ(deps_of(map, 7, tile(kA, 512, 0, 90, 64, 4), AccessKind::Read), Ids{2});
    EXPECT_EQ(deps_of(map, 8, tile(kA, 512, 5, 50, 1, 1), AccessKind::Read), (Ids{1, 2, 6}));
  }
}

TEST(TensorMapLanes, OtherPitchesOnOneBufferAreCompared) {
  for (const Mode& mode : kModes) {
    TensorMap map(256, mode.index_above, mode.grids);
    // Rows 0..3, columns 0..63 of the buffer seen as 512 columns wide.
    EXPECT_EQ(deps_of(map, 1, tile(kA, 512, 0, 0, 4, 64), AccessKind::Write), Ids{});
    // Seen as 256 columns wide, row 2 = elements 512..575 = row 1 of the first: overlaps.
    EXPECT_EQ(deps_of(map, 2, tile(kA, 256, 2, 0, 1, 64), AccessKind::Read).count(1), 1u);
    // Row 1 of the 256-wide matrix, columns 0..63 = elements 256..319: row 0, columns
    // 256..319 of the 512-wide one, which task 1 did not touch.
    EXPECT_EQ(deps_of(map, 3, tile(kA, 256, 1, 0, 1, 64), AccessKind::Read), Ids{});
    // Past the last byte of task 1.
    EXPECT_EQ(deps_of(map, 4, tile(kA, 256, 8, 0, 4, 64), AccessKind::Write), Ids{});
    // A 256-wide tile over rows 0..7 meets task 1 and readers 2 and 3.
    EXPECT_EQ(deps_of(map, 5, tile(kA, 256, 0, 0, 8, 64), AccessKind::Write), (Ids{1, 2, 3}));
    EXPECT_EQ(deps_of(map, 6, tile(kA, 512, 0, 0, 4, 64), AccessKind::Read).count(5), 1u);
  }
}

TEST(TensorMapLanes, ViewsOutsideTheBandModelMeetTiles) {
  for (const Mode& mode : kModes) {
    TensorMap map(256, mode.index_above, mode.grids);
    for (uint64_t c = 0; c < 8; ++c)  // one row band of 64x64 tiles (tasks 1..8)
      EXPECT_EQ(deps_of(map, 1 + c, tile(kA, 512, 0, 64 * c, 64, 64), AccessKind::Write), Ids{});
    // Columns 500..523 wrap into the next row (no column band): the last and first tile.
    EXPECT_EQ(deps_of(map, 20, tile(kA, 512, 0, 500, 2, 24), AccessKind::Read), (Ids{1, 8}));
    EXPECT_EQ(deps_of(map, 21, tile(kA, 512, 0, 500, 2, 24), AccessKind::Write), (Ids{1, 8, 20}));
    EXPECT_EQ(deps_of(map, 22, tile(kA, 512, 0, 64, 64, 64), AccessKind::Read), Ids{2});
    EXPECT_EQ(deps_of(map, 23, tile(kA, 512, 1, 0, 1, 8), AccessKind::Read), (Ids{1, 21}));
    // A dense block of whole rows (1-D, no band) and a column through every row (its own
    // band, one column wide).
    EXPECT_EQ(deps_of(map, 24, slice1d(kA, 512 * 5, 512 * 6), AccessKind::Read),
              (Ids{1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(deps_of(map, 25, make_view(kA, 1u << 20, 200, {64}, {512}), AccessKind::Write),
              (Ids{4, 24}));
    EXPECT_EQ(deps_of(map, 26, tile(kA, 512, 0, 192, 64, 64), AccessKind::Read), (Ids{4, 25}));
    // A pitch the tiles do not share (513 elements): compared exactly, not by band.
    EXPECT_EQ(
        deps_of(map, 27, make_view(kA, 1u << 20, 0, {4, 64}, {513, 1}), AccessKind::Read).count(1),
        1u);
  }
}

// More column bands in one buffer than it has lanes for: the rest share the band-less
// lane and are still told apart by their own bands, exactly.
TEST(TensorMapLanes, MoreBandsThanLanesStayExact) {
  constexpr uint64_t kBands = 40, kRowBands = 3;  // 8 columns each, 320 columns
  for (const Mode& mode : kModes) {
    TensorMap map(1024, mode.index_above, mode.grids);
    auto id = [](uint64_t r, uint64_t c) { return 1 + r * kBands + c; };
    for (uint64_t r = 0; r < kRowBands; ++r)
      for (uint64_t c = 0; c < kBands; ++c)
        ASSERT_EQ(deps_of(map, id(r, c), tile(kA, 320, 8 * r, 8 * c, 8, 8), AccessKind::Write),
                  Ids{});
    for (uint64_t r = 0; r < kRowBands; ++r)
      for (uint64_t c = 0; c < kBands; ++c)
        ASSERT_EQ(deps_of(map, 1000 + id(r, c), tile(kA, 320, 8 * r + 1, 8 * c + 2, 3, 4),
                          AccessKind::Read),
                  Ids{id(r, c)});
    // Rows 6..9 x columns 150..169: bands 18..21 of row bands 0 and 1, and the readers
    // there (rows 8r+1..8r+3, columns 8c+2..8c+5: those of row band 1, bands 19 and 20).
    const Ids straddle = deps_of(map, 5000, tile(kA, 320, 6, 150, 4, 20), AccessKind::Write);
    Ids expected{1000 + id(1, 19), 1000 + id(1, 20)};
    for (uint64_t c = 18; c <= 21; ++c) {
      expected.insert(id(0, c));
      expected.insert(id(1, c));
    }
    EXPECT_EQ(straddle, expected);
    EXPECT_EQ(deps_of(map, 5001, tile(kA, 320, 7, 160, 1, 1), AccessKind::Read),
              (Ids{id(0, 20), 5000}));
    EXPECT_EQ(deps_of(map, 5002, tile(kA, 320, 5, 160, 1, 1), AccessKind::Read), Ids{id(0, 20)});
    for (uint64_t t = 1; t < 5003; ++t) map.retire(t);
    EXPECT_EQ(map.live_entries(), 0u);
  }
}

// A lane whose writers are gone may take another band while its readers stay: a later
// write of the readers' band still waits for them.
TEST(TensorMapLanes, ReadersOutliveTheirLanesBand) {
  for (const Mode& mode : kModes) {
    TensorMap map(256, mode.index_above, mode.grids);
    EXPECT_EQ(deps_of(map, 1, tile(kA, 512, 0, 0, 64, 64), AccessKind::Read), Ids{});
    EXPECT_EQ(deps_of(map, 2, tile(kA, 512, 0, 64, 64, 64), AccessKind::Write), Ids{});
    EXPECT_EQ(deps_of(map, 3, tile(kA, 512, 0, 0, 64, 64), AccessKind::Write), Ids{1});
    EXPECT_EQ(deps_of(map, 4, tile(kA, 512, 0, 64, 64, 64), AccessKind::Read), Ids{2});
    map.retire(2);
    EXPECT_EQ(deps_of(map, 5, tile(kA, 512, 0, 128, 64, 64), AccessKind::Write), Ids{});
    EXPECT_EQ(deps_of(map, 6, tile(kA, 512, 0, 64, 64, 64), AccessKind::Write), Ids{4});
    EXPECT_EQ(deps_of(map, 7, tile(kA, 512, 0, 0, 64, 192), AccessKind::Read), (Ids{3, 5, 6}));
    EXPECT_EQ(deps_of(map, 8, slice1d(kA, 0, 512 * 64), AccessKind::Write), (Ids{3, 5, 6, 7}));
    EXPECT_EQ(map.live_entries(), 1u);
  }
}

// Lanes are released when their records go and reused by other bands and buffers.
TEST(TensorMapLanes, RetiredLanesAreReused) {
  TensorMap map(4096, 4);
  uint64_t task = 1;
  for (uint64_t round = 0; round < 50; ++round) {
    const uint64_t addr = kA + (round % 3) * 0x100000;
    const int64_t width = 8 + static_cast<int64_t>(round % 5) * 4;  // other bands each round
    std::vector<uint64_t> writers;
    for (int64_t c = 0; c + width <= 256; c += width) {
      writers.push_back(task);
      ASSERT_EQ(deps_of(map, task++, tile(addr, 256, 0, c, 16, width), AccessKind::Write), Ids{});
    }
    for (size_t i = 0; i < writers.size(); ++i) {
      const int64_t c = static_cast<int64_t>(i) * width;
      ASSERT_EQ(deps_of(map, task++, tile(addr, 256, 3, c + 1, 2, 2), AccessKind::Read),
                Ids{writers[i]});
    }
    ASSERT_EQ(deps_of(map, task++, tile(addr, 256, 0, 0, 16, 256), AccessKind::Read).size(),
              writers.size());
    for (uint64_t t = 1; t < task; ++t) map.retire(t);
    ASSERT_EQ(map.live_entries(), 0u);
  }
}

}  // namespace
}  // namespace simpler::rt
