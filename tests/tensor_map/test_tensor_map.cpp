// Unit tests of the tensor map's dependency rules (RAW, WAW, WAR, ReadWrite, overlap,
// retire, capacity, clear).
#include "engine/tensor_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "views.h"

namespace simpler::rt {
namespace {

using testing::make_view;
using testing::slice1d;
using testing::tile;
using testing::tile_transposed;

constexpr uint64_t kA = 0x100000;
constexpr uint64_t kB = 0x200000;

// Runs one access and returns its dependencies as a set (the map may repeat ids).
std::set<uint64_t> deps_of(TensorMap& map, uint64_t task, const ChipTensor& view, AccessKind kind) {
  std::vector<uint64_t> deps;
  EXPECT_TRUE(map.access(task, view, kind, deps));
  return {deps.begin(), deps.end()};
}

using Ids = std::set<uint64_t>;

// Tiles of one row band meet in byte range; the scan skips those whose columns are apart
// (same row pitch) without the exact test. Adjacent, one-column-overlapping, other-pitch,
// other-dtype and 3-D views around that filter still get exactly the right edges, with
// the scan and with the interval tree (index_above 0), each with and without tile grids.
TEST(TensorMap, ColumnBandsOfOneRowBandAreExact) {
  for (size_t index_above : {TensorMap::kDefaultIndexAbove, size_t{0}}) {
    for (bool grids : {true, false}) {
      TensorMap map(256, index_above, grids);
      for (uint64_t c = 0; c < 8; ++c)
        EXPECT_EQ(deps_of(map, 1 + c, tile(kA, 512, 0, 64 * c, 64, 64), AccessKind::Write), Ids{});
      EXPECT_EQ(deps_of(map, 20, tile(kA, 512, 0, 128, 64, 64), AccessKind::Read), Ids{3});
      // Columns 127..128: the last column of tile 1 and the first of tile 2 (and reader 20).
      EXPECT_EQ(deps_of(map, 21, tile(kA, 512, 10, 127, 2, 2), AccessKind::Write), (Ids{2, 3, 20}));
      // Every other row through a pitch of 1024 elements: not comparable by columns, so
      // left to the general test.
      EXPECT_EQ(deps_of(map, 22, make_view(kA, 1u << 20, 64 * 512 + 448, {4, 64}, {1024, 1}),
                        AccessKind::Read),
                Ids{});  // rows 64.. are untouched so far
      // (Conservative there: it must name tile 8, and may name its row-band mates.)
      EXPECT_EQ(deps_of(map, 23, make_view(kA, 1u << 20, 448, {4, 64}, {1024, 1}), AccessKind::Read)
                    .count(8),
                1u);
      // A 3-D box (two row planes) over columns 256..319 only: tile 5 alone.
      EXPECT_EQ(deps_of(map, 24, make_view(kA, 1u << 20, 256, {2, 4, 64}, {8192, 512, 1}),
                        AccessKind::Read),
                Ids{5});
      // INT8 with the same byte pitch (2048): columns in bytes, so bytes 1020..1027 meet the
      // float tiles 3 (bytes 768..1023) and 4 (1024..1279).
      EXPECT_EQ(deps_of(map, 25, make_view(kA, 1u << 20, 1020, {2, 8}, {2048, 1}, CHIP_DT_INT8),
                        AccessKind::Read),
                (Ids{4, 5}));
    }
  }
}

TEST(TensorMap, ReadAfterWriteWaitsForTheWriter) {
  TensorMap map(64);
  EXPECT_EQ(deps_of(map, 1, slice1d(kA, 0, 100), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 100), AccessKind::Read), Ids{1});
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 10, 20), AccessKind::Read), Ids{1});
}

// What a synchronous read_value / write_value of the orchestrator waits for: only the
// tasks whose accesses conflict with the view (not every task), and nothing is recorded.
TEST(TensorMap, ConflictsNameOnlyTheConflictingTasksAndRecordNothing) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 100), AccessKind::Write);
  deps_of(map, 2, slice1d(kB, 0, 100), AccessKind::Write);  // unrelated buffer
  deps_of(map, 3, slice1d(kA, 0, 50), AccessKind::Read);
  deps_of(map, 4, slice1d(kA, 200, 300), AccessKind::Write);  // same buffer, apart
  const size_t live = map.live_entries();
  auto conflicts = [&](const ChipTensor& v, AccessKind k) {
    std::vector<uint64_t> deps;
    map.conflicts(v, k, deps);
    return Ids(deps.begin(), deps.end());
  };
  EXPECT_EQ(conflicts(slice1d(kA, 10, 20), AccessKind::Read), Ids{1});        // its writer
  EXPECT_EQ(conflicts(slice1d(kA, 10, 20), AccessKind::Write), (Ids{1, 3}));  // + its reader
  EXPECT_EQ(conflicts(slice1d(kA, 120, 150), AccessKind::Write), Ids{});
  EXPECT_EQ(conflicts(slice1d(0x300000, 0, 10), AccessKind::Write), Ids{});  // unknown buffer
  EXPECT_EQ(map.live_entries(), live);
  // A later access sees exactly what it saw before the queries (nothing was hidden).
  EXPECT_EQ(deps_of(map, 5, slice1d(kA, 0, 100), AccessKind::Read), Ids{1});
}

TEST(TensorMap, ReadsDoNotOrderEachOther) {
  TensorMap map(64);
  EXPECT_EQ(deps_of(map, 1, slice1d(kA, 0, 100), AccessKind::Read), Ids{});
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 100), AccessKind::Read), Ids{});
  EXPECT_EQ(map.live_entries(), 2u);
}

TEST(TensorMap, WriteAfterWriteWaitsAndHidesTheCoveredWriter) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 100), AccessKind::Write);
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 100), AccessKind::Write), Ids{1});
  EXPECT_EQ(map.live_entries(), 1u);  // writer 1 is fully covered by writer 2
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 50, 60), AccessKind::Read), Ids{2});
}

TEST(TensorMap, WriteAfterReadWaitsForEveryReaderSinceTheLastWrite) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 100), AccessKind::Write);
  deps_of(map, 2, slice1d(kA, 0, 50), AccessKind::Read);
  deps_of(map, 3, slice1d(kA, 40, 100), AccessKind::Read);
  deps_of(map, 4, slice1d(kA, 60, 70), AccessKind::Read);
  EXPECT_EQ(deps_of(map, 5, slice1d(kA, 45, 65), AccessKind::Write), (Ids{1, 2, 3, 4}));
  // Readers 2..4 stay: writer 5 covers none of them completely.
  EXPECT_EQ(deps_of(map, 6, slice1d(kA, 0, 100), AccessKind::Write), (Ids{1, 2, 3, 4, 5}));
  EXPECT_EQ(map.live_entries(), 1u);
}

TEST(TensorMap, ReadWriteIsBothARead) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 10), AccessKind::Write);
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 10), AccessKind::ReadWrite), Ids{1});
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 0, 10), AccessKind::Read), Ids{2});
}

TEST(TensorMap, ReadWriteIsBothAWrite) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 10), AccessKind::Read);
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 10), AccessKind::ReadWrite), Ids{1});
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 0, 10), AccessKind::ReadWrite), Ids{2});
  EXPECT_EQ(deps_of(map, 4, slice1d(kA, 5, 6), AccessKind::Read), Ids{3});
}

TEST(TensorMap, DisjointSlicesOfOneBufferDoNotSerialize) {
  TensorMap map(64);
  for (uint64_t t = 0; t < 10; ++t)
    EXPECT_EQ(deps_of(map, t + 1, slice1d(kA, 10 * t, 10 * t + 10), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 20, slice1d(kA, 35, 36), AccessKind::Read), Ids{4});
  EXPECT_EQ(deps_of(map, 21, slice1d(kA, 19, 31), AccessKind::Read), (Ids{2, 3, 4}));
}

TEST(TensorMap, DisjointTilesOfAMatrixDoNotSerialize) {
  TensorMap map(256);
  // 8x8 grid of 16x16 tiles of a 128x128 matrix; tiles of one row band overlap in bytes.
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 8; ++j)
      EXPECT_EQ(
          deps_of(map, 1 + i * 8 + j, tile(kA, 128, 16 * i, 16 * j, 16, 16), AccessKind::Write),
          Ids{});
  EXPECT_EQ(map.live_entries(), 64u);
  EXPECT_EQ(deps_of(map, 100, tile(kA, 128, 16 * 3, 16 * 5, 16, 16), AccessKind::Read),
            Ids{1 + 3 * 8 + 5});
  // Straddles four tiles.
  EXPECT_EQ(deps_of(map, 101, tile(kA, 128, 20, 20, 16, 16), AccessKind::Read),
            (Ids{1 + 1 * 8 + 1, 1 + 1 * 8 + 2, 1 + 2 * 8 + 1, 1 + 2 * 8 + 2}));
  // One row inside one tile, one column inside another.
  EXPECT_EQ(deps_of(map, 102, tile(kA, 128, 33, 64, 1, 16), AccessKind::Read), Ids{1 + 2 * 8 + 4});
  EXPECT_EQ(deps_of(map, 103, tile(kA, 128, 0, 127, 128, 1), AccessKind::Read),
            (Ids{8, 16, 24, 32, 40, 48, 56, 64}));
}

TEST(TensorMap, DifferentBuffersNeverSerialize) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 100), AccessKind::Write);
  EXPECT_EQ(deps_of(map, 2, slice1d(kB, 0, 100), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 3, slice1d(kB, 0, 100), AccessKind::Read), Ids{2});
}

TEST(TensorMap, PartialOverwriteKeepsTheOlderWriterVisible) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 100), AccessKind::Write);
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 50), AccessKind::Write), Ids{1});
  EXPECT_EQ(map.live_entries(), 2u);  // writer 1 still owns [50, 100)
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 60, 100), AccessKind::Read), Ids{1});
  const Ids straddling = deps_of(map, 4, slice1d(kA, 40, 60), AccessKind::Read);
  EXPECT_TRUE(straddling.count(1) && straddling.count(2));
  const Ids inside_second = deps_of(map, 5, slice1d(kA, 10, 20), AccessKind::Read);
  EXPECT_TRUE(inside_second.count(2));
}

TEST(TensorMap, TransposedViewComparesExactlyWithTiles) {
  TensorMap map(64);
  deps_of(map, 1, tile(kA, 8, 0, 0, 4, 4), AccessKind::Write);
  deps_of(map, 2, tile(kA, 8, 4, 0, 4, 4), AccessKind::Write);
  // The transpose of the top-left tile touches exactly the same elements.
  EXPECT_EQ(deps_of(map, 3, tile_transposed(kA, 8, 0, 0, 4, 4), AccessKind::Read), Ids{1});
  // Transpose of the whole matrix conflicts with both.
  EXPECT_EQ(deps_of(map, 4, tile_transposed(kA, 8, 0, 0, 8, 8), AccessKind::Write), (Ids{1, 2, 3}));
}

TEST(TensorMap, StridedViewsWithEqualStridesCompareExactly) {
  TensorMap map(64);
  deps_of(map, 1, make_view(kA, 4096, 0, {50}, {2}), AccessKind::Write);  // even elements
  EXPECT_EQ(deps_of(map, 2, make_view(kA, 4096, 1, {50}, {2}), AccessKind::Write), Ids{});
  EXPECT_EQ(deps_of(map, 3, make_view(kA, 4096, 10, {5}, {2}), AccessKind::Read), Ids{1});
}

TEST(TensorMap, StridedViewsWithDifferentStridesAreConservative) {
  TensorMap map(64);
  deps_of(map, 1, make_view(kA, 4096, 0, {50}, {2}), AccessKind::Write);  // 0, 2, 4, ...
  // 1, 4, 7, ... meets the even elements at 4.
  EXPECT_EQ(deps_of(map, 2, make_view(kA, 4096, 1, {30}, {3}), AccessKind::Read), Ids{1});
  // A byte view over part of the same buffer: element sizes differ, byte ranges decide.
  EXPECT_EQ(deps_of(map, 3, make_view(kA, 4096, 16, {4}, {1}, CHIP_DT_INT8), AccessKind::Read),
            Ids{1});
  EXPECT_EQ(deps_of(map, 4, make_view(kA, 4096, 400, {4}, {1}, CHIP_DT_INT8), AccessKind::Read),
            Ids{});  // bytes 400..403 lie past the last even element (bytes 392..395)
}

TEST(TensorMap, NegativeStrideCoversItsElements) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 5, 6), AccessKind::Write);
  // Elements 9, 8, ..., 0.
  EXPECT_EQ(deps_of(map, 2, make_view(kA, 4096, 9, {10}, {-1}), AccessKind::Read), Ids{1});
  EXPECT_EQ(deps_of(map, 3, make_view(kA, 4096, 19, {5}, {-1}), AccessKind::Read), Ids{});
}

TEST(TensorMap, EmptyViewOrdersNothing) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 10), AccessKind::Write);
  EXPECT_EQ(deps_of(map, 2, make_view(kA, 4096, 0, {0, 4}, {4, 1}), AccessKind::Write), Ids{});
  EXPECT_EQ(map.live_entries(), 1u);
}

TEST(TensorMap, UndescribableViewConflictsWithTheWholeBuffer) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 1000, 1001), AccessKind::Write);
  ChipTensor bad = slice1d(kA, 0, 1);
  bad.dtype = 99;  // no such type: the map cannot know which bytes it touches
  EXPECT_EQ(deps_of(map, 2, bad, AccessKind::Read), Ids{1});
  EXPECT_EQ(deps_of(map, 3, slice1d(kB, 0, 1), AccessKind::Write), Ids{});
}

TEST(TensorMap, ATaskNeverWaitsForItself) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 10), AccessKind::Write);
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 10), AccessKind::Read), Ids{1});
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 10), AccessKind::Write), Ids{1});
  EXPECT_EQ(map.live_entries(), 1u);  // task 2's write covers its read and writer 1
}

TEST(TensorMap, RetireFreesEntriesAndRemovesDependencies) {
  TensorMap map(64);
  deps_of(map, 1, slice1d(kA, 0, 10), AccessKind::Write);
  deps_of(map, 1, slice1d(kB, 0, 10), AccessKind::Write);
  deps_of(map, 2, slice1d(kA, 20, 30), AccessKind::Write);
  EXPECT_EQ(map.live_entries(), 3u);
  map.retire(1);
  EXPECT_EQ(map.live_entries(), 1u);
  EXPECT_EQ(deps_of(map, 3, slice1d(kA, 0, 100), AccessKind::Read), Ids{2});
  EXPECT_EQ(deps_of(map, 4, slice1d(kB, 0, 100), AccessKind::Read), Ids{});
  map.retire(12345);  // unknown: nothing happens
  EXPECT_EQ(map.live_entries(), 3u);
  map.retire(2);
  map.retire(3);
  map.retire(4);
  EXPECT_EQ(map.live_entries(), 0u);
  // Retired ids may be reused.
  deps_of(map, 1, slice1d(kA, 0, 10), AccessKind::Write);
  EXPECT_EQ(deps_of(map, 2, slice1d(kA, 0, 10), AccessKind::Read), Ids{1});
}

TEST(TensorMap, OverflowReturnsFalseAndChangesNothing) {
  TensorMap map(2);
  EXPECT_EQ(map.capacity(), 2u);
  deps_of(map, 1, slice1d(kA, 0, 10), AccessKind::Write);
  deps_of(map, 2, slice1d(kA, 20, 30), AccessKind::Write);
  std::vector<uint64_t> deps{77};
  EXPECT_FALSE(map.access(3, slice1d(kA, 0, 5), AccessKind::Read, deps));
  EXPECT_EQ(deps, std::vector<uint64_t>{77});  // nothing appended
  EXPECT_EQ(map.live_entries(), 2u);
  // The failed access left no trace: a writer over it waits for task 1 only.
  EXPECT_FALSE(map.access(4, slice1d(kA, 0, 5), AccessKind::Write, deps));
  EXPECT_EQ(deps_of(map, 4, slice1d(kA, 0, 10), AccessKind::Write), Ids{1});  // covers 1: fits
  EXPECT_EQ(map.live_entries(), 2u);
  map.retire(2);
  EXPECT_EQ(deps_of(map, 5, slice1d(kA, 0, 30), AccessKind::Read), Ids{4});
}

TEST(TensorMap, ZeroCapacityRefusesEverything) {
  TensorMap map(0);
  std::vector<uint64_t> deps;
  EXPECT_FALSE(map.access(1, slice1d(kA, 0, 10), AccessKind::Read, deps));
  EXPECT_EQ(map.live_entries(), 0u);
}

TEST(TensorMap, CapacityBeyondEntryNumberingIsRefused) {
  EXPECT_THROW(TensorMap(size_t{1} << 40), std::invalid_argument);
  // Entry numbers are 32-bit, four to a task line, up to two lines per live entry.
  EXPECT_THROW(TensorMap(size_t{1} << 29), std::invalid_argument);
  EXPECT_NO_THROW(TensorMap((size_t{1} << 29) - 1));
}

// A task's entries fill task lines of four; more chain lines, whose middle ones empty
// when later writes hide their entries, and all of which go when the task retires.
TEST(TensorMap, ATaskOfManyAccessesKeepsAndDropsEachOne) {
  TensorMap map(64);
  for (uint64_t b = 0; b < 10; ++b)
    EXPECT_EQ(deps_of(map, 1, slice1d(kA + b * 4096, 0, 10), AccessKind::Write), Ids{});
  EXPECT_EQ(map.live_entries(), 10u);
  for (uint64_t b = 2; b < 8; ++b)  // hides the second line and half of the others
    EXPECT_EQ(deps_of(map, 2, slice1d(kA + b * 4096, 0, 10), AccessKind::Write), Ids{1});
  EXPECT_EQ(map.live_entries(), 10u);
  for (uint64_t b : {0, 1, 8, 9})
    EXPECT_EQ(deps_of(map, 3, slice1d(kA + b * 4096, 0, 10), AccessKind::Read), Ids{1});
  map.retire(1);
  EXPECT_EQ(map.live_entries(), 10u);  // task 2's six and task 3's four
  for (uint64_t b = 0; b < 10; ++b)
    EXPECT_EQ(deps_of(map, 4, slice1d(kA + b * 4096, 0, 10), AccessKind::Read),
              b >= 2 && b < 8 ? Ids{2} : Ids{});
  map.retire(3);
  map.retire(4);
  // One task rewriting one slice many times holds one entry.
  for (int k = 0; k < 40; ++k) deps_of(map, 5, slice1d(kA, 0, 10), AccessKind::Write);
  EXPECT_EQ(map.live_entries(), 7u);
  map.retire(2);
  map.retire(5);
  EXPECT_EQ(map.live_entries(), 0u);
  EXPECT_EQ(deps_of(map, 6, slice1d(kA + 4 * 4096, 0, 10), AccessKind::Read), Ids{});
}

TEST(TensorMap, ClearForgetsEverything) {
  TensorMap map(64);
  for (uint64_t t = 1; t <= 10; ++t)
    deps_of(map, t, slice1d(kA + t * 4096, 0, 10), AccessKind::Write);
  map.clear();
  EXPECT_EQ(map.live_entries(), 0u);
  for (uint64_t t = 1; t <= 10; ++t)
    EXPECT_EQ(deps_of(map, 100 + t, slice1d(kA + t * 4096, 0, 10), AccessKind::Read), Ids{});
  EXPECT_EQ(map.live_entries(), 10u);
  map.retire(5);  // a task cleared away is simply unknown
  EXPECT_EQ(map.live_entries(), 10u);
}

TEST(TensorMap, ManyBuffersAndTasksStayConsistent) {
  // Grows the internal pools and indices past their initial sizes, then retires all.
  TensorMap map(20000);
  for (uint64_t t = 0; t < 5000; ++t) {
    const uint64_t addr = 0x1000000 + (t % 1000) * 1024;
    const Ids d =
        deps_of(map, t, slice1d(addr, (t / 1000) * 4, (t / 1000) * 4 + 4), AccessKind::Write);
    EXPECT_EQ(d, Ids{});
  }
  EXPECT_EQ(map.live_entries(), 5000u);
  EXPECT_EQ(deps_of(map, 9000, slice1d(0x1000000 + 7 * 1024, 0, 20), AccessKind::Read),
            (Ids{7, 1007, 2007, 3007, 4007}));
  for (uint64_t t = 0; t < 5000; ++t)
    if ((t / 1000) % 2 == 0) map.retire(t);
  EXPECT_EQ(map.live_entries(), 2001u);
  EXPECT_EQ(deps_of(map, 9001, slice1d(0x1000000 + 7 * 1024, 0, 20), AccessKind::Write),
            (Ids{1007, 3007, 9000}));
  EXPECT_EQ(map.live_entries(), 1999u);  // 1007, 3007 and 9000 are covered by 9001
}

// Far more live views of one buffer than the linear-scan limit: the byte-range index must
// find exactly the overlapping ones, through inserts, covering writes, retires, and the
// shrink back to a linear scan.
TEST(TensorMap, ManyViewsOfOneBufferKeepExactEdges) {
  for (bool grids : {true, false}) {
    constexpr uint64_t kSlices = 4 * TensorMap::kDefaultIndexAbove + 7;
    TensorMap map(10000, TensorMap::kDefaultIndexAbove, grids);
    for (uint64_t i = 0; i < kSlices; ++i)
      EXPECT_EQ(deps_of(map, i, slice1d(kA, i * 16, i * 16 + 16), AccessKind::Write), Ids{});
    for (uint64_t i = 0; i < kSlices; ++i)  // a reader inside each slice
      EXPECT_EQ(deps_of(map, 1000 + i, slice1d(kA, i * 16 + 8, i * 16 + 12), AccessKind::Read),
                Ids{i});
    EXPECT_EQ(deps_of(map, 2000, slice1d(kA, 16 * 5 + 15, 16 * 7 + 1), AccessKind::Read),
              (Ids{5, 6, 7}));
    // A write over slices 10..12 waits for their writers and readers and hides them.
    EXPECT_EQ(deps_of(map, 3000, slice1d(kA, 160, 208), AccessKind::Write),
              (Ids{10, 11, 12, 1010, 1011, 1012}));
    EXPECT_EQ(map.live_entries(), 2 * kSlices + 1 + 1 - 6);
    EXPECT_EQ(deps_of(map, 3001, slice1d(kA, 170, 171), AccessKind::Read), Ids{3000});
    // 2-D tiles of the same buffer seen as a 16-column matrix: exact per-dimension test
    // inside the byte-range candidates (rows 2..3 x cols 4..7 meets slices 2 and 3 only).
    EXPECT_EQ(deps_of(map, 3002, tile(kA, 16, 2, 4, 2, 4), AccessKind::Read), (Ids{2, 3}));
    for (uint64_t i = 0; i < kSlices; ++i) {
      map.retire(i);
      map.retire(1000 + i);
    }
    EXPECT_EQ(map.live_entries(), 4u);  // 2000, 3000, 3001, 3002
    EXPECT_EQ(deps_of(map, 4000, slice1d(kA, 0, 16 * kSlices), AccessKind::Write),
              (Ids{2000, 3000, 3001, 3002}));
    EXPECT_EQ(map.live_entries(), 1u);
  }
}

}  // namespace
}  // namespace simpler::rt
