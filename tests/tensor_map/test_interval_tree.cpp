// The tensor map's byte-range trees against a brute-force list: random inserts, erases
// and overlap queries on several trees sharing one node pool.
#include "engine/tensor_map_interval_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace simpler::rt {
namespace {

struct Range {
  uint32_t node;
  int64_t lo;
  int64_t hi;
};

std::vector<uint32_t> brute_force(const std::vector<Range>& set, int64_t lo, int64_t hi) {
  std::vector<std::pair<int64_t, uint32_t>> hits;
  for (const Range& r : set)
    if (r.lo < hi && lo < r.hi) hits.emplace_back(r.lo, r.node);
  std::sort(hits.begin(), hits.end());
  std::vector<uint32_t> nodes;
  for (const auto& h : hits) nodes.push_back(h.second);
  return nodes;
}

// The visited nodes, sorted by (start, node) after checking that the tree visited them
// in ascending start order (the order among equal starts is unspecified).
std::vector<uint32_t> tree_query(const IntervalForest& forest, uint32_t root, int64_t lo,
                                 int64_t hi, const std::vector<Range>* set = nullptr) {
  std::vector<uint32_t> nodes;
  forest.query(root, lo, hi, [&](uint32_t n) { nodes.push_back(n); });
  if (set == nullptr) return nodes;
  auto start_of = [&](uint32_t n) {
    for (const Range& r : *set)
      if (r.node == n) return r.lo;
    ADD_FAILURE() << "visited node " << n << " is not in the tree";
    return int64_t{0};
  };
  std::vector<std::pair<int64_t, uint32_t>> keyed;
  for (uint32_t n : nodes) keyed.emplace_back(start_of(n), n);
  for (size_t i = 1; i < keyed.size(); ++i)
    EXPECT_LE(keyed[i - 1].first, keyed[i].first) << "visited out of start order";
  std::sort(keyed.begin(), keyed.end());
  nodes.clear();
  for (const auto& k : keyed) nodes.push_back(k.second);
  return nodes;
}

TEST(IntervalForest, EmptyTreeVisitsNothing) {
  IntervalForest forest;
  EXPECT_TRUE(tree_query(forest, IntervalForest::kNil, -100, 100).empty());
}

TEST(IntervalForest, HalfOpenRangesThatOnlyTouchDoNotOverlap) {
  IntervalForest forest;
  forest.reserve_nodes(3);
  uint32_t root = IntervalForest::kNil;
  forest.insert(root, 0, 0, 10);
  forest.insert(root, 1, 10, 20);
  forest.insert(root, 2, 20, 30);
  EXPECT_EQ(tree_query(forest, root, 10, 20), std::vector<uint32_t>{1});
  EXPECT_EQ(tree_query(forest, root, 9, 21), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_TRUE(tree_query(forest, root, 30, 40).empty());
  forest.erase(root, 1);
  EXPECT_TRUE(tree_query(forest, root, 10, 20).empty());
}

// In ascending start order, exactly the overlapping ranges, after any mix of operations;
// ranges include long ones spanning many short ones and equal starts.
TEST(IntervalForest, MatchesBruteForceUnderRandomInsertsAndErases) {
  constexpr int kTrees = 3;
  constexpr uint32_t kNodes = 600;
  std::mt19937_64 rng(12345);
  IntervalForest forest;
  forest.reserve_nodes(kNodes);
  uint32_t roots[kTrees] = {IntervalForest::kNil, IntervalForest::kNil, IntervalForest::kNil};
  std::vector<Range> sets[kTrees];
  std::vector<uint32_t> free_nodes;
  for (uint32_t n = kNodes; n-- > 0;) free_nodes.push_back(n);

  auto random_range = [&](int64_t& lo, int64_t& hi) {
    lo = static_cast<int64_t>(rng() % 10000) - 500;
    if (rng() % 8 == 0) lo -= lo % 256;  // shared starts
    const uint64_t kind = rng() % 10;
    const int64_t len =
        kind == 0 ? static_cast<int64_t>(rng() % 5000) + 1 : static_cast<int64_t>(rng() % 64) + 1;
    hi = lo + len;
  };
  size_t checked = 0;
  for (int step = 0; step < 20000; ++step) {
    const int t = static_cast<int>(rng() % kTrees);
    const uint64_t op = rng() % 10;
    if (op < 4 && !free_nodes.empty()) {
      Range r{free_nodes.back(), 0, 0};
      free_nodes.pop_back();
      random_range(r.lo, r.hi);
      forest.insert(roots[t], r.node, r.lo, r.hi);
      sets[t].push_back(r);
    } else if (op < 5 && !sets[t].empty() && !free_nodes.empty()) {
      // A node takes over another's place (a write hiding an equal range).
      const size_t i = rng() % sets[t].size();
      const uint32_t heir = free_nodes.back();
      free_nodes.pop_back();
      ASSERT_TRUE(forest.same_range(sets[t][i].node, sets[t][i].lo, sets[t][i].hi));
      forest.replace(roots[t], sets[t][i].node, heir);
      free_nodes.push_back(sets[t][i].node);
      sets[t][i].node = heir;
    } else if (op < 7 && !sets[t].empty()) {
      const size_t i = rng() % sets[t].size();
      forest.erase(roots[t], sets[t][i].node);
      free_nodes.push_back(sets[t][i].node);  // reused later, as entry numbers are
      sets[t][i] = sets[t].back();
      sets[t].pop_back();
    } else {
      int64_t lo, hi;
      random_range(lo, hi);
      ASSERT_EQ(tree_query(forest, roots[t], lo, hi, &sets[t]), brute_force(sets[t], lo, hi))
          << "step " << step << " tree " << t << " query [" << lo << ", " << hi << ")";
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
  for (int t = 0; t < kTrees; ++t) {
    while (!sets[t].empty()) {
      forest.erase(roots[t], sets[t].back().node);
      sets[t].pop_back();
    }
    EXPECT_EQ(roots[t], IntervalForest::kNil) << "tree " << t << " not empty after erasing all";
  }
}

// Many disjoint equal ranges (one buffer's slices): the tree stays shallow enough that a
// point query visits only the range holding the point.
TEST(IntervalForest, DisjointSlicesAnswerPointQueriesWithOneNode) {
  constexpr uint32_t kSlices = 4096;
  IntervalForest forest;
  forest.reserve_nodes(kSlices);
  uint32_t root = IntervalForest::kNil;
  for (uint32_t n = 0; n < kSlices; ++n) forest.insert(root, n, n * 64, n * 64 + 64);
  for (uint32_t n = 0; n < kSlices; n += 97)
    EXPECT_EQ(tree_query(forest, root, n * 64 + 5, n * 64 + 6), std::vector<uint32_t>{n});
}

}  // namespace
}  // namespace simpler::rt
