// Tests of the view geometry: extents, density, and that relate() is exact for tiles and
// equal-stride views and never unsound for arbitrary strided views.
#include "engine/overlap.h"

#include <gtest/gtest.h>

#include <bitset>
#include <cstdint>
#include <iterator>
#include <random>
#include <vector>

#include "views.h"

namespace simpler::rt {
namespace {

using testing::make_view;
using testing::tile;
using testing::tile_transposed;

constexpr size_t kBytes = 2048;
using ByteSet = std::bitset<kBytes>;

// The bytes a view touches, by enumerating its elements.
ByteSet touched_bytes(const ChipTensor& v) {
  ByteSet bytes;
  const int64_t es = chip_dtype_size(v.dtype);
  int64_t idx[CHIP_TENSOR_MAX_DIMS] = {};
  for (uint32_t k = 0; k < v.ndims; ++k)
    if (v.shapes[k] == 0) return bytes;
  while (true) {
    int64_t off = v.start_offset;
    for (uint32_t k = 0; k < v.ndims; ++k) off += idx[k] * v.strides[k];
    for (int64_t b = 0; b < es; ++b) bytes.set(static_cast<size_t>(off * es + b));
    uint32_t k = 0;
    while (k < v.ndims && ++idx[k] == v.shapes[k]) idx[k++] = 0;
    if (k == v.ndims) return bytes;
  }
}

TEST(ViewGeometry, ExtentOfARowMajorTile) {
  const ViewGeometry g = describe_view(tile(0, 16, 2, 3, 4, 5));
  ASSERT_TRUE(g.boxed);
  EXPECT_FALSE(g.dense);
  EXPECT_EQ(g.lo, (2 * 16 + 3) * 4);
  EXPECT_EQ(g.hi, ((5 * 16 + 7) + 1) * 4);
  EXPECT_EQ(g.ndims, 2);
  EXPECT_EQ(g.strides[0], 1);
  EXPECT_EQ(g.strides[1], 16);
}

// 2-D row-major tiles take a fast path in describe_view; the same view with a size-1
// dimension in front takes the general one. Both must give the same geometry, for tiles
// inside and across their pitch, at offsets that need the 64-bit division, and for the
// shapes the fast path leaves alone (single row or column, dense, negative start).
TEST(ViewGeometry, TileFastPathMatchesTheGeneralPath) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const int64_t pitch = 1 + static_cast<int64_t>(rng() % 64);
    const int64_t rows = static_cast<int64_t>(rng() % 6),
                  cols = 1 + static_cast<int64_t>(rng() % 70);
    int64_t start = static_cast<int64_t>(rng() % 4096) - 64;
    if (i % 7 == 0) start += int64_t{1} << 33;
    const uint32_t dtype = i % 3 == 0 ? CHIP_DT_INT8 : CHIP_DT_FLOAT32;
    const ChipTensor two = make_view(0, 0, start, {rows, cols}, {pitch, 1}, dtype);
    const ChipTensor three = make_view(0, 0, start, {1, rows, cols}, {7, pitch, 1}, dtype);
    const ViewGeometry a = describe_view(two), b = describe_view(three);
    SCOPED_TRACE(::testing::Message() << "rows " << rows << " cols " << cols << " pitch " << pitch
                                      << " start " << start);
    ASSERT_EQ(a.empty, b.empty);
    if (a.empty) continue;
    ASSERT_EQ(a.boxed, b.boxed);
    ASSERT_EQ(a.lo, b.lo);
    ASSERT_EQ(a.hi, b.hi);
    ASSERT_EQ(a.dense, b.dense);
    if (!a.boxed) continue;
    ASSERT_EQ(a.ndims, b.ndims);
    ASSERT_EQ(a.elem_size, b.elem_size);
    ASSERT_EQ(a.base, b.base);
    ASSERT_EQ(a.coords_valid, b.coords_valid);
    ASSERT_EQ(a.radix_fit, b.radix_fit);
    for (int k = 0; k < a.ndims; ++k) {
      ASSERT_EQ(a.strides[k], b.strides[k]);
      ASSERT_EQ(a.shapes[k], b.shapes[k]);
      if (a.coords_valid) {
        ASSERT_EQ(a.coords[k], b.coords[k]);
      }
    }
  }
}

// contiguous_bytes takes a 1-D slice without overflow checks while its start and extent
// are below 2^59: the answer (and bytes) must be those of the general rule, which the same
// slice as a 2-D view {1, n} takes, on both sides of every overflow boundary.
TEST(ViewGeometry, SliceFastPathMatchesTheGeneralRule) {
  const int64_t big[] = {0,
                         1,
                         5,
                         (int64_t{1} << 59) - 2,
                         (int64_t{1} << 59) - 1,
                         int64_t{1} << 59,
                         (int64_t{1} << 60) - 1,
                         int64_t{1} << 60,
                         INT64_MAX / 8,
                         INT64_MAX / 8 + 1,
                         INT64_MAX / 2,
                         INT64_MAX,
                         -1,
                         -4096,
                         INT64_MIN};
  const uint32_t dtypes[] = {CHIP_DT_INT8, CHIP_DT_FLOAT16, CHIP_DT_FLOAT32, CHIP_DT_INT64};
  const int64_t strides[] = {1, 0, 2, -1};
  std::mt19937_64 rng(12);
  for (int i = 0; i < 40000; ++i) {
    const int64_t start =
        i % 2 == 0 ? big[rng() % std::size(big)] : static_cast<int64_t>(rng() % 100000) - 50;
    const int64_t n = i % 3 == 0 ? big[rng() % std::size(big)] : static_cast<int64_t>(rng() % 4);
    const int64_t stride = strides[rng() % std::size(strides)];
    const uint32_t dtype = dtypes[rng() % std::size(dtypes)];
    const uint32_t es = chip_dtype_size(dtype);
    const ChipTensor one = make_view(0, 0, start, {n}, {stride}, dtype);
    const ChipTensor two = make_view(0, 0, start, {1, n}, {7, stride}, dtype);
    int64_t lo1 = -1, hi1 = -1, lo2 = -1, hi2 = -1;
    const bool c1 = contiguous_bytes(one, es, lo1, hi1);
    const bool c2 = contiguous_bytes(two, es, lo2, hi2);
    SCOPED_TRACE(::testing::Message()
                 << "start " << start << " n " << n << " stride " << stride << " es " << es);
    ASSERT_EQ(c1, c2);
    if (!c1) continue;
    ASSERT_EQ(lo1, lo2);
    ASSERT_EQ(hi1, hi2);
  }
}

TEST(ViewGeometry, FullRowsAreDense) {
  EXPECT_TRUE(describe_view(tile(0, 16, 2, 0, 4, 16)).dense);
  EXPECT_TRUE(describe_view(tile_transposed(0, 16, 2, 0, 4, 16)).dense);
  EXPECT_FALSE(describe_view(tile(0, 16, 2, 0, 4, 15)).dense);
}

TEST(ViewGeometry, NegativeStridesAndBroadcastsAreNormalised) {
  const ViewGeometry g = describe_view(make_view(0, 4096, 9, {10, 3}, {-1, 0}, CHIP_DT_INT16));
  ASSERT_TRUE(g.boxed);
  EXPECT_TRUE(g.dense);
  EXPECT_EQ(g.base, 0);
  EXPECT_EQ(g.lo, 0);
  EXPECT_EQ(g.hi, 20);
}

TEST(ViewGeometry, InvalidDescriptorsAreOpaque) {
  ChipTensor v = make_view(0, 4096, 0, {4}, {1});
  v.ndims = 0;
  EXPECT_FALSE(describe_view(v).boxed);
  v = make_view(0, 4096, 0, {-4}, {1});
  EXPECT_FALSE(describe_view(v).boxed);
  v = make_view(0, 4096, INT64_MAX - 2, {4}, {1});  // byte offsets overflow
  EXPECT_FALSE(describe_view(v).boxed);
  // Opaque views overlap anything non-empty and cover nothing.
  const ViewGeometry opaque = describe_view(v);
  const ViewGeometry some = describe_view(make_view(0, 4096, 100, {4}, {1}));
  EXPECT_TRUE(relate(opaque, some).overlap);
  EXPECT_FALSE(relate(opaque, some).covers);
}

TEST(ViewGeometry, EmptyViewsTouchNothing) {
  const ViewGeometry e = describe_view(make_view(0, 4096, 0, {4, 0}, {1, 4}));
  EXPECT_TRUE(e.empty);
  const ViewGeometry all = describe_view(make_view(0, 4096, 0, {100}, {1}));
  EXPECT_FALSE(relate(e, all).overlap);
  EXPECT_FALSE(relate(all, e).overlap);
}

struct Described {
  ChipTensor view;
  ByteSet bytes;
  ViewGeometry geometry;
};

std::vector<Described> describe_all(const std::vector<ChipTensor>& views) {
  std::vector<Described> out;
  for (const ChipTensor& v : views) out.push_back({v, touched_bytes(v), describe_view(v)});
  return out;
}

// relate() must agree with brute force on every pair.
void expect_exact_pairs(const std::vector<ChipTensor>& views) {
  const std::vector<Described> all = describe_all(views);
  for (const Described& a : all)
    for (const Described& b : all) {
      const Relation r = relate(a.geometry, b.geometry);
      ASSERT_EQ(r.overlap, (a.bytes & b.bytes).any())
          << "start " << a.view.start_offset << " vs " << b.view.start_offset;
      ASSERT_EQ(r.covers, (b.bytes & ~a.bytes).none())
          << "start " << a.view.start_offset << " vs " << b.view.start_offset;
    }
}

TEST(Relate, ExactForEveryPairOfTilesOfASmallMatrix) {
  constexpr int64_t n = 6;
  std::vector<ChipTensor> views;
  for (int64_t r0 = 0; r0 < n; ++r0)
    for (int64_t r1 = r0 + 1; r1 <= n; ++r1)
      for (int64_t c0 = 0; c0 < n; ++c0)
        for (int64_t c1 = c0 + 1; c1 <= n; ++c1) {
          views.push_back(tile(0, n, r0, c0, r1 - r0, c1 - c0));
          if ((r0 + c0) % 3 == 0) views.push_back(tile_transposed(0, n, r0, c0, r1 - r0, c1 - c0));
        }
  expect_exact_pairs(views);
}

TEST(Relate, ExactForOneDimensionalViewsWithEqualStrides) {
  for (int64_t stride = 1; stride <= 4; ++stride) {
    std::vector<ChipTensor> views;
    for (int64_t start = 0; start < 12; ++start)
      for (int64_t count = 1; count <= 5; ++count) {
        views.push_back(make_view(0, 4096, start, {count}, {stride}));
        const int64_t last = start + (count - 1) * stride;  // same elements, walked backwards
        views.push_back(make_view(0, 4096, last, {count}, {-stride}));
      }
    expect_exact_pairs(views);
  }
}

// Arbitrary strided views (any dtype, strides of either sign, self-overlapping) inside
// kBytes: relate() may over-approximate overlap and under-approximate cover, never the
// reverse.
TEST(Relate, NeverUnsoundForRandomStridedViews) {
  std::mt19937_64 rng(12345);
  const uint32_t dtypes[] = {CHIP_DT_INT8, CHIP_DT_FLOAT16, CHIP_DT_FLOAT32, CHIP_DT_FLOAT64};
  auto random_view = [&]() {
    while (true) {
      const uint32_t dtype = dtypes[rng() % 4];
      const int64_t elems = static_cast<int64_t>(kBytes / chip_dtype_size(dtype));
      ChipTensor v = make_view(0, kBytes, 0, {1}, {1}, dtype);
      v.ndims = 1 + static_cast<uint32_t>(rng() % 3);
      int64_t lo = 0, hi = 0;  // element offsets relative to start
      for (uint32_t k = 0; k < v.ndims; ++k) {
        v.shapes[k] = 1 + static_cast<int64_t>(rng() % 6);
        v.strides[k] = static_cast<int64_t>(rng() % 41) - 20;
        const int64_t reach = (v.shapes[k] - 1) * v.strides[k];
        (reach < 0 ? lo : hi) += reach;
      }
      const int64_t room = elems - (hi - lo);
      if (room <= 0) continue;
      v.start_offset = -lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(room));
      return v;
    }
  };
  size_t proven_disjoint = 0;
  for (int i = 0; i < 20000; ++i) {
    const ChipTensor a = random_view(), b = random_view();
    const ByteSet ba = touched_bytes(a), bb = touched_bytes(b);
    const ViewGeometry ga = describe_view(a), gb = describe_view(b);
    const Relation r = relate(ga, gb);
    const bool overlap = (ba & bb).any();
    if (overlap) {
      ASSERT_TRUE(r.overlap) << "missed overlap, pair " << i;
    } else if (!r.overlap && ga.lo < gb.hi && gb.lo < ga.hi) {
      ++proven_disjoint;
    }
    if (r.covers) {
      ASSERT_TRUE((bb & ~ba).none()) << "false cover, pair " << i;
    }
  }
  EXPECT_GT(proven_disjoint, 0u);  // some byte-range-overlapping pairs are told apart
}

}  // namespace
}  // namespace simpler::rt
