// Tests of the tensor map's grid buffers: while every live view of a buffer is a tile of
// one grid (the shape of the view that opened the buffer, at whole multiples of it), an
// access is looked up by tile instead of scanned. The answers must be exactly those of the
// general lanes: a differential test runs random streams through a map with grids and one
// without (which the brute-force oracle checks) and compares every answer, the live
// count and every refusal; unit tests pin the transitions (a view off the grid turns the
// buffer general, an emptied buffer may open a new grid) and conflicts().
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
using testing::slice1d;
using testing::tile;
using testing::tile_transposed;

constexpr uint64_t kA = 0x100000;
constexpr uint64_t kB = 0x200000;
using Ids = std::set<uint64_t>;

Ids deps_of(TensorMap& map, uint64_t task, const ChipTensor& view, AccessKind kind) {
  std::vector<uint64_t> deps;
  EXPECT_TRUE(map.access(task, view, kind, deps));
  return {deps.begin(), deps.end()};
}

Ids conflicts_of(TensorMap& map, const ChipTensor& view, AccessKind kind) {
  std::vector<uint64_t> deps;
  map.conflicts(view, kind, deps);
  return {deps.begin(), deps.end()};
}

TEST(TensorMapGrid, TilesOfOneBufferMeetOnlyTheirOwnTile) {
  TensorMap map(256);
  for (uint64_t i = 0; i < 16; ++i)  // 4x4 tiles of 16x16 in a 64x64 matrix
    EXPECT_EQ(deps_of(map, i, tile(kA, 64, (i / 4) * 16, (i % 4) * 16, 16, 16), AccessKind::Write),
              Ids{});
  EXPECT_EQ(deps_of(map, 100, tile(kA, 64, 16, 32, 16, 16), AccessKind::Read), Ids{6});
  EXPECT_EQ(deps_of(map, 101, tile(kA, 64, 16, 32, 16, 16), AccessKind::Read), Ids{6});
  EXPECT_EQ(deps_of(map, 102, tile(kA, 64, 16, 32, 16, 16), AccessKind::ReadWrite),
            (Ids{6, 100, 101}));
  EXPECT_EQ(map.live_entries(), 16u);  // 102 hid 6, 100 and 101
  EXPECT_EQ(deps_of(map, 103, tile(kA, 64, 48, 48, 16, 16), AccessKind::Read), Ids{15});
  map.retire(15);
  EXPECT_EQ(deps_of(map, 104, tile(kA, 64, 48, 48, 16, 16), AccessKind::Write), Ids{103});
}

TEST(TensorMapGrid, ATaskRewritingItsOwnReadKeepsItsRecord) {
  TensorMap map(64);
  EXPECT_EQ(deps_of(map, 1, slice1d(kA, 0, 16), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 16), AccessKind::Read), Ids{1});
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 16), AccessKind::Write), Ids{1});  // hides its read
  EXPECT_EQ(map.live_entries(), 1u);
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 0, 16), AccessKind::Read), Ids{2});
  map.retire(2);
  EXPECT_EQ(deps_of(map, 4, slice1d(kA, 0, 16), AccessKind::Write), Ids{3});
}

TEST(TensorMapGrid, AViewOffTheGridSeesEveryTileItTouches) {
  TensorMap map(256);
  for (uint64_t i = 0; i < 8; ++i)  // slices of 16 elements
    EXPECT_EQ(deps_of(map, i, slice1d(kA, i * 16, i * 16 + 16), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 10, slice1d(kA, 16, 32), AccessKind::Read), Ids{1});
  // Not aligned to the grid: the buffer turns general, with every entry kept.
  EXPECT_EQ(deps_of(map, 11, slice1d(kA, 24, 56), AccessKind::Write), (Ids{1, 2, 3, 10}));
  EXPECT_EQ(map.live_entries(), 9u);  // 11 hid slice 2
  EXPECT_EQ(deps_of(map, 12, slice1d(kA, 16, 32), AccessKind::Read), (Ids{1, 11}));
  EXPECT_EQ(deps_of(map, 13, slice1d(kA, 0, 128), AccessKind::Write),
            (Ids{0, 1, 3, 4, 5, 6, 7, 10, 11, 12}));
  EXPECT_EQ(map.live_entries(), 1u);
}

TEST(TensorMapGrid, SameFirstByteOtherShapeIsNotTheTile) {
  TensorMap map(256);
  EXPECT_EQ(deps_of(map, 1, tile(kA, 64, 0, 0, 16, 16), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 2, tile(kA, 64, 16, 0, 16, 16), AccessKind::Write), Ids{});
  // Same first byte as tile 1, but 32 rows: it also covers tile 2.
  EXPECT_EQ(deps_of(map, 3, tile(kA, 64, 0, 0, 32, 16), AccessKind::Read), (Ids{1, 2}));
  // Same first byte and extents, other pitch: the even rows of the 32-wide view fall in
  // columns 0..15 of the 64-wide tile.
  EXPECT_EQ(deps_of(map, 4, tile(kB, 64, 0, 0, 16, 16), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 5, tile(kB, 32, 0, 0, 16, 16), AccessKind::Read), Ids{4});
  EXPECT_EQ(deps_of(map, 6, tile(kB, 32, 0, 0, 16, 16), AccessKind::Write), (Ids{4, 5}));
}

TEST(TensorMapGrid, DenseTilesCompareBytesWhateverTheirDtype) {
  TensorMap map(64);
  EXPECT_EQ(deps_of(map, 1, slice1d(kA, 0, 8), AccessKind::Write), Ids{});  // 32 bytes
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 8, 16), AccessKind::Write), Ids{});
  // The same 32 bytes as uint8, and as float16 with a 16-element offset.
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 0, 32, CHIP_DT_UINT8), AccessKind::Read), Ids{1});
  EXPECT_EQ(deps_of(map, 4, slice1d(kA, 16, 32, CHIP_DT_FLOAT16), AccessKind::Read), Ids{2});
  // A transposed description of a tile is the same bytes as the tile.
  EXPECT_EQ(deps_of(map, 5, tile(kB, 64, 0, 0, 4, 8), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 6, tile_transposed(kB, 64, 0, 0, 4, 8), AccessKind::Read), Ids{5});
  EXPECT_EQ(deps_of(map, 7, tile_transposed(kB, 64, 4, 0, 4, 8), AccessKind::Read), Ids{});
}

TEST(TensorMapGrid, AnEmptiedBufferOpensANewGrid) {
  TensorMap map(64);
  EXPECT_EQ(deps_of(map, 1, slice1d(kA, 0, 16), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 4, 8), AccessKind::Read), Ids{1});  // general now
  map.retire(1);
  map.retire(2);
  EXPECT_EQ(map.live_entries(), 0u);
  // Opens a grid of 4-element slices; the 16-element view then turns it general again.
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 4, 8), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 4, slice1d(kA, 12, 16), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 5, slice1d(kA, 8, 12), AccessKind::Read), Ids{});
  EXPECT_EQ(deps_of(map, 6, slice1d(kA, 0, 16), AccessKind::Read), (Ids{3, 4}));
  EXPECT_EQ(deps_of(map, 7, slice1d(kA, 0, 16), AccessKind::Write), (Ids{3, 4, 5, 6}));
  EXPECT_EQ(map.live_entries(), 1u);
}

TEST(TensorMapGrid, ConflictsRecordNothing) {
  TensorMap map(64);
  EXPECT_EQ(deps_of(map, 1, slice1d(kA, 0, 16), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 16, 32), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 16, 32), AccessKind::Read), Ids{2});
  EXPECT_EQ(conflicts_of(map, slice1d(kA, 16, 32), AccessKind::Read), Ids{2});
  EXPECT_EQ(conflicts_of(map, slice1d(kA, 16, 32), AccessKind::Write), (Ids{2, 3}));
  EXPECT_EQ(conflicts_of(map, slice1d(kA, 32, 48), AccessKind::Write), Ids{});  // a new tile
  EXPECT_EQ(conflicts_of(map, slice1d(kA, 8, 24), AccessKind::Write), (Ids{1, 2, 3}));
  EXPECT_EQ(conflicts_of(map, slice1d(kA, 8, 24, CHIP_DT_UINT8), AccessKind::Read), Ids{1});
  EXPECT_EQ(map.live_entries(), 3u);
  // Still a grid: the off-grid probes above changed nothing.
  EXPECT_EQ(deps_of(map, 4, slice1d(kA, 16, 32), AccessKind::Write), (Ids{2, 3}));
}

TEST(TensorMapGrid, RefusalWhenFullChangesNothing) {
  TensorMap map(2);
  std::vector<uint64_t> deps;
  ASSERT_TRUE(map.access(1, slice1d(kA, 0, 16), AccessKind::Write, deps));
  ASSERT_TRUE(map.access(2, slice1d(kA, 0, 16), AccessKind::Read, deps));
  deps.clear();
  EXPECT_FALSE(map.access(3, slice1d(kA, 16, 32), AccessKind::Write, deps));  // a new tile
  EXPECT_FALSE(map.access(3, slice1d(kA, 0, 16), AccessKind::Read, deps));
  EXPECT_FALSE(map.access(3, slice1d(kB, 0, 16), AccessKind::Read, deps));  // a new buffer
  EXPECT_TRUE(deps.empty());
  EXPECT_EQ(map.live_entries(), 2u);
  // A write of the tile hides both entries: room enough.
  EXPECT_TRUE(map.access(3, slice1d(kA, 0, 16), AccessKind::Write, deps));
  EXPECT_EQ(Ids(deps.begin(), deps.end()), (Ids{1, 2}));
  EXPECT_EQ(map.live_entries(), 1u);
}

// At capacity, a write of a tile has room for the entries it hides (the tile's writer and
// readers, its own task's read among them) and reports each of them; a read, or a
// write of an empty tile, is refused without a dependency.
TEST(TensorMapGrid, AWriteAtCapacityHasRoomForWhatItHides) {
  TensorMap map(4);
  std::vector<uint64_t> deps;
  ASSERT_TRUE(map.access(1, slice1d(kA, 0, 16), AccessKind::Write, deps));
  ASSERT_TRUE(map.access(2, slice1d(kA, 0, 16), AccessKind::Read, deps));
  ASSERT_TRUE(map.access(3, slice1d(kA, 0, 16), AccessKind::Read, deps));
  ASSERT_TRUE(map.access(4, slice1d(kA, 16, 32), AccessKind::Write, deps));
  deps.clear();
  EXPECT_FALSE(map.access(5, slice1d(kA, 0, 16), AccessKind::Read, deps));
  EXPECT_FALSE(map.access(5, slice1d(kA, 32, 48), AccessKind::Write, deps));  // a new tile
  EXPECT_TRUE(deps.empty());
  EXPECT_EQ(deps_of(map, 5, slice1d(kA, 0, 16), AccessKind::ReadWrite), (Ids{1, 2, 3}));
  EXPECT_EQ(map.live_entries(), 2u);
  EXPECT_EQ(deps_of(map, 6, slice1d(kA, 0, 16), AccessKind::Read), Ids{5});
  EXPECT_EQ(deps_of(map, 7, slice1d(kA, 0, 16), AccessKind::Read), Ids{5});
  EXPECT_EQ(map.live_entries(), 4u);
  // Task 7's own read is among the hidden: its record stays with the new write.
  EXPECT_EQ(deps_of(map, 7, slice1d(kA, 0, 16), AccessKind::Write), (Ids{5, 6}));
  EXPECT_EQ(map.live_entries(), 2u);
  EXPECT_EQ(deps_of(map, 8, slice1d(kA, 0, 16), AccessKind::Read), Ids{7});
  map.retire(7);
  EXPECT_EQ(deps_of(map, 9, slice1d(kA, 0, 16), AccessKind::Write), Ids{8});
  EXPECT_EQ(deps_of(map, 10, slice1d(kA, 16, 32), AccessKind::Read), Ids{4});
}

// A view with the descriptor of the grid's opener (but its start) is looked up by its
// first byte without being described: whatever its strides, it must meet exactly the tile
// it is, and a start off the grid must still see every tile it touches.
TEST(TensorMapGrid, TheOpenersShapeAtAnotherStartIsThatTileOrNone) {
  TensorMap map(256);
  // Elements 15, 14, .., 0 (a reversed 16-element slice): the grid's tiles are 16-element
  // intervals, found again below from reversed views of the same shape.
  auto reversed = [](int64_t last) { return make_view(kA, 1u << 20, last, {16}, {-1}); };
  EXPECT_EQ(deps_of(map, 1, reversed(15), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 2, reversed(31), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 3, reversed(31), AccessKind::Read), Ids{2});
  EXPECT_EQ(deps_of(map, 4, slice1d(kA, 16, 32), AccessKind::Read), Ids{2});
  EXPECT_EQ(deps_of(map, 5, reversed(15), AccessKind::ReadWrite), Ids{1});
  // Same descriptor, start 8 elements on: half of each tile, so off the grid.
  EXPECT_EQ(deps_of(map, 6, reversed(23), AccessKind::Write), (Ids{2, 3, 4, 5}));
  EXPECT_EQ(deps_of(map, 7, reversed(15), AccessKind::Read), (Ids{5, 6}));
  // Tiles of a matrix opened by a transposed descriptor, found again by that descriptor.
  EXPECT_EQ(deps_of(map, 10, tile_transposed(kB, 64, 0, 0, 16, 16), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 11, tile_transposed(kB, 64, 16, 16, 16, 16), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 12, tile_transposed(kB, 64, 16, 16, 16, 16), AccessKind::Read), Ids{11});
  EXPECT_EQ(deps_of(map, 13, tile(kB, 64, 0, 0, 16, 16), AccessKind::Read), Ids{10});
  EXPECT_EQ(deps_of(map, 14, tile_transposed(kB, 64, 8, 8, 16, 16), AccessKind::Write),
            (Ids{10, 11, 12, 13}));
}

// Task ids need not be consecutive (the task index groups consecutive ones): ids far apart
// answer as consecutive ones.
// A grid's home tile (at its opener's first byte) is found through the grid, the others
// through the tile index: every lookup path must find it, also after it was closed and
// reopened, and a view off the grid must see its entries. Each step is checked against a
// map without grids.
TEST(TensorMapGrid, TheHomeTileIsFoundOnEveryPath) {
  TensorMap grids(4096, TensorMap::kDefaultIndexAbove, true);
  TensorMap lanes(4096, TensorMap::kDefaultIndexAbove, false);
  uint64_t task = 0;
  auto step = [&](const ChipTensor& v, AccessKind kind) {
    std::vector<uint64_t> dg, dl, cg, cl;
    grids.conflicts(v, kind, cg);
    lanes.conflicts(v, kind, cl);
    EXPECT_EQ(Ids(cg.begin(), cg.end()), Ids(cl.begin(), cl.end())) << "conflicts, task " << task;
    EXPECT_TRUE(grids.access(task, v, kind, dg));
    EXPECT_TRUE(lanes.access(task, v, kind, dl));
    EXPECT_EQ(Ids(dg.begin(), dg.end()), Ids(dl.begin(), dl.end())) << "task " << task;
    EXPECT_EQ(grids.live_entries(), lanes.live_entries()) << "task " << task;
    return Ids(dg.begin(), dg.end());
  };
  auto retire = [&](uint64_t t) {
    grids.retire(t);
    lanes.retire(t);
  };
  // A grid of 16-element slices opened at element 64 (its home), and tiles around it.
  step(slice1d(kA, 64, 80), AccessKind::Write);  // task 0
  ++task;
  for (int64_t i = 0; i < 40; ++i, ++task)
    step(slice1d(kA, 80 + 16 * i, 96 + 16 * i), AccessKind::Write);
  EXPECT_EQ(step(slice1d(kA, 64, 80), AccessKind::Read), Ids{0});  // contiguous: by bytes
  ++task;
  // The home tile described as a dense, not row-major view (2 x 8, column-major).
  EXPECT_EQ(step(make_view(kA, 1u << 20, 64, {2, 8}, {1, 2}), AccessKind::Read), Ids{0});
  ++task;
  EXPECT_EQ(step(slice1d(kA, 64, 80), AccessKind::Write), (Ids{0, 41, 42}));
  const uint64_t home_writer = task++;
  // Most tiles empty: the empty ones are closed, the home one with them; then reopened.
  for (uint64_t t = 1; t <= 38; ++t) retire(t);
  retire(home_writer);
  EXPECT_EQ(step(slice1d(kA, 64, 80), AccessKind::Read), Ids{});
  ++task;
  EXPECT_EQ(step(slice1d(kA, 64, 80), AccessKind::Write), Ids{task - 1});
  ++task;
  // A view off the grid sees the home tile's entry too.
  EXPECT_EQ(step(slice1d(kA, 72, 700), AccessKind::Read), (Ids{task - 1, 39}));
  ++task;
  // A grid of boxes: its home tile by the opener's descriptor, and described transposed.
  step(tile(kB, 64, 16, 16, 16, 16), AccessKind::Write);
  const uint64_t box_writer = task++;
  step(tile(kB, 64, 0, 0, 16, 16), AccessKind::Write);
  ++task;
  EXPECT_EQ(step(tile(kB, 64, 16, 16, 16, 16), AccessKind::Read), Ids{box_writer});
  ++task;
  EXPECT_EQ(step(tile_transposed(kB, 64, 16, 16, 16, 16), AccessKind::Read), Ids{box_writer});
  ++task;
  retire(box_writer);
  EXPECT_EQ(step(tile(kB, 64, 16, 16, 16, 16), AccessKind::Write), (Ids{task - 2, task - 1}));
  ++task;
}

// A tile knows the length of its grid's intervals only below 2^32 bytes (longer ones are
// found through the grid), and its key is its grid's buffer address with its first byte.
TEST(TensorMapGrid, LongTilesAndTilesOfTwoBuffersAtOneOffset) {
  TensorMap grids(4096, TensorMap::kDefaultIndexAbove, true);
  TensorMap lanes(4096, TensorMap::kDefaultIndexAbove, false);
  uint64_t task = 0;
  auto step = [&](const ChipTensor& v, AccessKind kind) {
    std::vector<uint64_t> dg, dl;
    EXPECT_TRUE(grids.access(task, v, kind, dg));
    EXPECT_TRUE(lanes.access(task, v, kind, dl));
    EXPECT_EQ(Ids(dg.begin(), dg.end()), Ids(dl.begin(), dl.end())) << "task " << task;
    EXPECT_EQ(grids.live_entries(), lanes.live_entries()) << "task " << task;
    ++task;
    return Ids(dg.begin(), dg.end());
  };
  auto slice = [](uint64_t addr, int64_t begin, int64_t end) {
    return make_view(addr, uint64_t{1} << 40, begin, {end - begin}, {1});
  };
  constexpr uint64_t kC = uint64_t{1} << 40, kD = uint64_t{2} << 40;
  constexpr int64_t k4G = int64_t{1} << 30;                            // float32 elements: 4 GiB
  EXPECT_EQ(step(slice(kC, 0, k4G), AccessKind::Write), Ids{});        // 0
  EXPECT_EQ(step(slice(kC, k4G, 2 * k4G), AccessKind::Write), Ids{});  // 1
  EXPECT_EQ(step(slice(kC, k4G, 2 * k4G), AccessKind::Read), Ids{1});  // 2
  EXPECT_EQ(step(slice(kC, k4G, 2 * k4G), AccessKind::Write), (Ids{1, 2}));  // 3
  EXPECT_EQ(step(slice(kC, 0, k4G + 16), AccessKind::Read), (Ids{0, 3}));    // 4: off the grid
  // Tiles of 4 GiB + 64 bytes: a 64-byte view at a tile's start is not that tile.
  const int64_t len = k4G + 16;
  EXPECT_EQ(step(slice(kD, 0, len), AccessKind::Write), Ids{});               // 5
  EXPECT_EQ(step(slice(kD, len, 2 * len), AccessKind::Write), Ids{});         // 6
  EXPECT_EQ(step(slice(kD, len, 2 * len), AccessKind::Write), Ids{6});        // 7
  EXPECT_EQ(step(slice(kD, len, len + 16), AccessKind::Write), Ids{7});       // 8
  EXPECT_EQ(step(slice(kD, len + 16, 2 * len), AccessKind::Read), (Ids{7}));  // 9
  // Two buffers, tiles at the same offsets.
  EXPECT_EQ(step(slice(kA, 0, 16), AccessKind::Write), Ids{});    // 10
  EXPECT_EQ(step(slice(kB, 0, 16), AccessKind::Write), Ids{});    // 11
  EXPECT_EQ(step(slice(kA, 16, 32), AccessKind::Write), Ids{});   // 12
  EXPECT_EQ(step(slice(kB, 16, 32), AccessKind::Write), Ids{});   // 13
  EXPECT_EQ(step(slice(kA, 16, 32), AccessKind::Read), Ids{12});  // 14
  EXPECT_EQ(step(slice(kB, 16, 32), AccessKind::Read), Ids{13});  // 15
  EXPECT_EQ(step(slice(kB, 0, 16), AccessKind::Write), Ids{11});  // 16
}

TEST(TensorMapGrid, TaskIdsThatPileUpAnswerAsConsecutiveOnes) {
  TensorMap consecutive(1024), piled(1024);
  auto id = [](uint64_t t, bool pile) { return pile ? (t << 32) | 7 : t; };
  for (uint64_t t = 1; t <= 600; ++t) {
    const ChipTensor v =
        slice1d(kA, 16 * static_cast<int64_t>(t % 50), 16 * static_cast<int64_t>(t % 50) + 16);
    const AccessKind kind = t % 3 == 0 ? AccessKind::Write : AccessKind::Read;
    std::vector<uint64_t> dc, dp;
    ASSERT_TRUE(consecutive.access(id(t, false), v, kind, dc));
    ASSERT_TRUE(piled.access(id(t, true), v, kind, dp));
    Ids expected;
    for (uint64_t d : dc) expected.insert(id(d, true));
    ASSERT_EQ(Ids(dp.begin(), dp.end()), expected) << "task " << t;
    if (t > 200) {
      consecutive.retire(id(t - 200, false));
      piled.retire(id(t - 200, true));
    }
    ASSERT_EQ(consecutive.live_entries(), piled.live_entries()) << "task " << t;
  }
}

// Random streams over a few buffers, mostly tiles of a few grids (so grids open, take
// accesses, turn general and reopen), with some views off any grid: a map with grids must
// answer exactly as one without, access by access.
struct StreamConfig {
  uint64_t seed;
  size_t capacity;
  size_t index_above;
};

class Differential : public ::testing::TestWithParam<StreamConfig> {};

ChipTensor random_view(std::mt19937_64& rng, uint64_t addr) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  constexpr int64_t kCols = 32, kRows = 16;  // a float32 matrix
  switch (rng() % 12) {
    case 0:
    case 1:
    case 2:
    case 3:  // 4x8 tiles
      return tile(addr, kCols, 4 * pick(0, 3), 8 * pick(0, 3), 4, 8);
    case 4:
    case 5:  // 4x8 tiles described transposed
      return tile_transposed(addr, kCols, 4 * pick(0, 3), 8 * pick(0, 3), 4, 8);
    case 6:
    case 7:  // 64-element slices
      return slice1d(addr, 64 * pick(0, 7), 64 * pick(0, 7) + 64);
    case 8:  // 2x16 tiles
      return tile(addr, kCols, 2 * pick(0, 7), 16 * pick(0, 1), 2, 16);
    case 9: {  // any tile
      const int64_t r0 = pick(0, kRows - 1), c0 = pick(0, kCols - 1);
      return tile(addr, kCols, r0, c0, pick(1, kRows - r0), pick(1, kCols - c0));
    }
    case 10: {  // bytes, or a strided 1-D view
      if (rng() % 2) {
        const int64_t b = pick(0, kRows * kCols * 4 - 1);
        return slice1d(addr, b, b + pick(1, std::min<int64_t>(96, kRows * kCols * 4 - b)),
                       CHIP_DT_UINT8);
      }
      const int64_t stride = pick(2, 5), count = pick(1, 20);
      return make_view(addr, 1u << 20, pick(0, kRows * kCols - 1 - (count - 1) * stride), {count},
                       {stride});
    }
    default:
      return make_view(addr, 1u << 20, 0, {kRows * kCols}, {1});
  }
}

TEST_P(Differential, GridsAnswerExactlyAsTheLanes) {
  const StreamConfig cfg = GetParam();
  std::mt19937_64 rng(cfg.seed);
  TensorMap grids(cfg.capacity, cfg.index_above, true);
  TensorMap lanes(cfg.capacity, cfg.index_above, false);
  constexpr uint64_t kAddrs[] = {0x10000, 0x20000, 0x30000, 0x40000};
  std::vector<uint64_t> live;
  size_t refused = 0;
  for (uint64_t task = 1; task <= 4000; ++task) {
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int a = 0; a < n; ++a) {
      // Buffers 0 and 1 see mostly views of one grid shape at a time.
      const uint64_t b = rng() % 4;
      const ChipTensor v =
          b < 2 && rng() % 8 != 0
              ? (b == 0 ? tile(kAddrs[b], 32, 4 * (rng() % 4), 8 * (rng() % 4), 4, 8)
                        : slice1d(kAddrs[b], 64 * (rng() % 8), 64 * (rng() % 8) + 64))
              : random_view(rng, kAddrs[b]);
      const AccessKind kind = testing::random_access_kind(rng);
      bool og = false;
      ASSERT_TRUE(testing::same_access(grids, lanes, task, v, kind, rng() % 4 == 0, og));
      refused += !og;
    }
    live.push_back(task);
    // Retire in random order, sometimes in bursts that empty buffers.
    const size_t keep = rng() % 16 == 0 ? 0 : 24;
    while (live.size() > keep) {
      const size_t i = rng() % live.size();
      grids.retire(live[i]);
      lanes.retire(live[i]);
      live[i] = live.back();
      live.pop_back();
      if (rng() % 3 == 0) break;
    }
    ASSERT_EQ(grids.live_entries(), lanes.live_entries()) << "after retiring, task " << task;
  }
  if (cfg.capacity < 32) {
    EXPECT_GT(refused, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, Differential,
                         ::testing::Values(StreamConfig{1, 1 << 16, TensorMap::kDefaultIndexAbove},
                                           StreamConfig{2, 1 << 16, 0}, StreamConfig{3, 1 << 16, 2},
                                           StreamConfig{4, 20, TensorMap::kDefaultIndexAbove},
                                           StreamConfig{5, 24, 2},
                                           StreamConfig{6, 1 << 16, TensorMap::kDefaultIndexAbove}),
                         [](const ::testing::TestParamInfo<StreamConfig>& info) {
                           return "seed" + std::to_string(info.param.seed) + "_cap" +
                                  std::to_string(info.param.capacity) + "_index" +
                                  std::to_string(info.param.index_above);
                         });

}  // namespace
}  // namespace simpler::rt
