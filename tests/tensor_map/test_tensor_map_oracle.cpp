// Brute-force oracle for the tensor map on randomized task streams.
//
// Tasks access random views (tiles of a 2-D tensor, their transposes, strided 1-D and
// 2-D views, byte views of other dtypes, whole buffers) of a few small buffers with random
// directions; tasks finish in a random order that respects the recorded edges and are
// retired, immediately or after a random lag. The oracle enumerates the exact bytes of
// every view and asserts after every task:
//   (1) no missed dependency: every earlier conflicting access of a task that has not
//       finished is reachable from the new task through the recorded edges;
//   (2) no needless edge: each returned id names a live task with a conflicting access
//       whose byte range overlaps, and, for views with equal strides and dtype in the
//       index-box families, whose bytes really overlap.
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/overlap.h"
#include "engine/tensor_map.h"
#include "views.h"

namespace simpler::rt {
namespace {

using testing::make_view;

constexpr int64_t kRows = 12;
constexpr int64_t kCols = 16;
constexpr size_t kBufferBytes = kRows * kCols * 4;  // float32 matrix
constexpr int kBuffers = 3;
constexpr uint64_t kBufferAddr[kBuffers] = {0x10000, 0x20400, 0x7f000000};
constexpr uint64_t kTaskIdBase = 1000;  // task ids are not indices
using ByteSet = std::bitset<kBufferBytes>;

enum class Family { Tile, Transposed, Strided1d, Strided2d, Bytes, Whole };

struct Access {
  size_t task;  // index into the oracle's task table
  int buffer;
  bool write;
  Family family;
  ChipTensor view;
  ByteSet bytes;
  int64_t lo;  // first and one-past-last touched byte
  int64_t hi;
};

struct Task {
  std::vector<size_t> accesses;
  std::vector<size_t> deps;  // task indices, from the map's answers
  bool finished = false;
  bool retired = false;
};

ByteSet touched_bytes(const ChipTensor& v) {
  ByteSet bytes;
  const int64_t es = chip_dtype_size(v.dtype);
  int64_t idx[CHIP_TENSOR_MAX_DIMS] = {};
  while (true) {
    int64_t off = v.start_offset;
    for (uint32_t k = 0; k < v.ndims; ++k) off += idx[k] * v.strides[k];
    for (int64_t b = 0; b < es; ++b) bytes.set(static_cast<size_t>(off * es + b));
    uint32_t k = 0;
    while (k < v.ndims && ++idx[k] == v.shapes[k]) idx[k++] = 0;
    if (k == v.ndims) return bytes;
  }
}

bool same_strides(const ChipTensor& a, const ChipTensor& b) {
  if (a.ndims != b.ndims || a.dtype != b.dtype) return false;
  for (uint32_t k = 0; k < a.ndims; ++k)
    if (a.strides[k] != b.strides[k]) return false;
  return true;
}

// Pairs the map must tell apart: disjoint byte ranges, or disjoint index boxes of views
// with the same strides and dtype.
bool provably_disjoint(const Access& a, const Access& b) {
  if (a.hi <= b.lo || b.hi <= a.lo) return true;
  const bool box_family =
      a.family == Family::Tile || a.family == Family::Transposed || a.family == Family::Strided1d;
  return box_family && a.family == b.family && same_strides(a.view, b.view) &&
         (a.bytes & b.bytes).none();
}

bool conflict(const Access& a, const Access& b) {
  return a.buffer == b.buffer && (a.write || b.write) && (a.bytes & b.bytes).any();
}

struct Config {
  uint64_t seed;
  size_t capacity;
  bool lagged_retire;  // retire some time after finishing, in any order
  size_t tasks = 1500;
  // Readers/writers per buffer above which the map indexes byte ranges in a tree; the
  // default leaves these small buffers on the linear scan, 0 and 2 force the tree paths.
  size_t index_above = TensorMap::kDefaultIndexAbove;
  // false: every buffer on the general lanes, none looked up by tile (see TensorMap).
  bool grids = true;
  // Most views are aligned 4x4 tiles (plain or transposed), so buffers stay grids for long
  // stretches between the views that turn them general.
  bool tile_heavy = false;
  // Accesses per task: 1 to this many. Above 4 a task's entries fill more than one of
  // the map's task lines, which then chain, empty and leave the chain.
  int max_accesses = 4;
};

class Oracle {
 public:
  explicit Oracle(const Config& cfg)
      : cfg_(cfg), rng_(cfg.seed), map_(cfg.capacity, cfg.index_above, cfg.grids) {}

  void run() {
    for (size_t j = 0; j < cfg_.tasks; ++j) {
      tasks_.emplace_back();
      const int n = 1 + static_cast<int>(rng_() % static_cast<uint64_t>(cfg_.max_accesses));
      for (int a = 0; a < n; ++a) {
        submit_access(j);
        if (::testing::Test::HasFatalFailure()) return;
      }
      check_no_missed_dependency(j);
      if (::testing::Test::HasFatalFailure()) return;
      progress(j);
      prune_active();
    }
    for (size_t t = 0; t < tasks_.size(); ++t) finish_and_retire(t);
    EXPECT_EQ(map_.live_entries(), 0u);
    EXPECT_GT(conflicts_checked_, cfg_.tasks);      // the streams do conflict
    EXPECT_GT(boxes_told_apart_, cfg_.tasks / 50);  // and the exact test matters
    if (cfg_.capacity < 64) {
      EXPECT_GT(overflows_, 0u);
    }
  }

 private:
  uint64_t id_of(size_t task) const { return kTaskIdBase + task; }
  bool gone(size_t task) const {
    return cfg_.lagged_retire ? tasks_[task].finished : tasks_[task].retired;
  }
  int64_t pick(int64_t lo, int64_t hi) {  // uniform in [lo, hi]
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }

  ChipTensor random_view(int buffer, Family* family) {
    const uint64_t addr = kBufferAddr[buffer];
    *family = static_cast<Family>(rng_() % 6);
    if (cfg_.tile_heavy && rng_() % 4 != 0) {
      *family = rng_() % 3 == 0 ? Family::Transposed : Family::Tile;
      const int64_t r0 = 4 * pick(0, kRows / 4 - 1), c0 = 4 * pick(0, kCols / 4 - 1);
      if (*family == Family::Tile)
        return make_view(addr, kBufferBytes, r0 * kCols + c0, {4, 4}, {kCols, 1});
      return make_view(addr, kBufferBytes, r0 * kCols + c0, {4, 4}, {1, kCols});
    }
    switch (*family) {
      case Family::Tile:
      case Family::Transposed: {
        int64_t r0, c0, nr, nc;
        if (rng_() % 2) {  // aligned 4x4 / 4x8 tiles: rewritten often, so covers happen
          r0 = 4 * pick(0, kRows / 4 - 1);
          c0 = 4 * pick(0, kCols / 4 - 1);
          nr = 4;
          nc = 4 * pick(1, 2);
          if (c0 + nc > kCols) nc = 4;
        } else {
          r0 = pick(0, kRows - 1);
          c0 = pick(0, kCols - 1);
          nr = pick(1, kRows - r0);
          nc = pick(1, kCols - c0);
        }
        if (*family == Family::Tile)
          return make_view(addr, kBufferBytes, r0 * kCols + c0, {nr, nc}, {kCols, 1});
        return make_view(addr, kBufferBytes, r0 * kCols + c0, {nc, nr}, {1, kCols});
      }
      case Family::Strided1d: {
        const int64_t elems = kRows * kCols;
        const int64_t stride = pick(1, 5) * (rng_() % 4 == 0 ? -1 : 1);
        const int64_t count = pick(1, 24);
        const int64_t span = (count - 1) * (stride < 0 ? -stride : stride);
        const int64_t first = pick(0, elems - 1 - span);
        const int64_t start = stride < 0 ? first + span : first;
        return make_view(addr, kBufferBytes, start, {count}, {stride});
      }
      case Family::Strided2d: {
        while (true) {
          const int64_t s0 = pick(-2 * kCols, 2 * kCols), s1 = pick(-8, 8);
          const int64_t n0 = pick(1, 5), n1 = pick(1, 6);
          int64_t lo = 0, hi = 0;
          ((n0 - 1) * s0 < 0 ? lo : hi) += (n0 - 1) * s0;
          ((n1 - 1) * s1 < 0 ? lo : hi) += (n1 - 1) * s1;
          const int64_t room = kRows * kCols - (hi - lo);
          if (room <= 0) continue;
          return make_view(addr, kBufferBytes, -lo + pick(0, room - 1), {n0, n1}, {s0, s1});
        }
      }
      case Family::Bytes: {
        const bool half = rng_() % 2;
        const int64_t elems = static_cast<int64_t>(kBufferBytes / (half ? 2 : 1));
        const int64_t begin = pick(0, elems - 1),
                      count = pick(1, std::min<int64_t>(40, elems - begin));
        return make_view(addr, kBufferBytes, begin, {count}, {1},
                         half ? CHIP_DT_FLOAT16 : CHIP_DT_UINT8);
      }
      case Family::Whole:
        break;
    }
    return make_view(addr, kBufferBytes, 0, {kRows * kCols}, {1});
  }

  void submit_access(size_t j) {
    Access acc;
    acc.task = j;
    acc.buffer = static_cast<int>(rng_() % kBuffers);
    acc.view = random_view(acc.buffer, &acc.family);
    const uint64_t roll = rng_() % 20;
    const AccessKind kind =
        roll < 9 ? AccessKind::Read : (roll < 16 ? AccessKind::Write : AccessKind::ReadWrite);
    acc.write = kind != AccessKind::Read;
    acc.bytes = touched_bytes(acc.view);
    acc.lo = -1;
    for (size_t b = 0; b < kBufferBytes; ++b) {
      if (!acc.bytes.test(b)) continue;
      if (acc.lo < 0) acc.lo = static_cast<int64_t>(b);
      acc.hi = static_cast<int64_t>(b) + 1;
    }

    std::vector<uint64_t> deps{~uint64_t{0}};  // a sentinel the map must leave alone
    for (int attempt = 0;; ++attempt) {
      ASSERT_LT(attempt, 200) << "could not make room in the tensor map";
      const size_t live_before = map_.live_entries();
      if (map_.access(id_of(j), acc.view, kind, deps)) break;
      ++overflows_;
      ASSERT_EQ(deps.size(), 1u) << "a refused access appended dependencies";
      ASSERT_EQ(map_.live_entries(), live_before) << "a refused access changed the map";
      make_room(j);
    }
    ASSERT_LE(map_.live_entries(), cfg_.capacity);
    for (size_t k = 1; k < deps.size(); ++k) check_edge(acc, deps[k]);
    const size_t index = accesses_.size();
    accesses_.push_back(acc);
    tasks_[j].accesses.push_back(index);
    active_.push_back(index);
  }

  // (2): the returned id is a live earlier task with a conflicting, not provably
  // disjoint access to the same buffer.
  void check_edge(const Access& acc, uint64_t dep_id) {
    ASSERT_GE(dep_id, kTaskIdBase);
    const size_t d = dep_id - kTaskIdBase;
    ASSERT_LT(d, acc.task) << "edge to itself or to a later task";
    ASSERT_FALSE(tasks_[d].retired) << "edge to retired task " << dep_id;
    bool justified = false;
    for (size_t i : tasks_[d].accesses) {
      const Access& other = accesses_[i];
      if (other.buffer == acc.buffer && (other.write || acc.write) &&
          !provably_disjoint(other, acc)) {
        justified = true;
        break;
      }
    }
    ASSERT_TRUE(justified) << "task " << id_of(acc.task) << " got a needless edge to " << dep_id;
    tasks_[acc.task].deps.push_back(d);
  }

  // (1): every conflicting earlier access of an unfinished task is reachable.
  void check_no_missed_dependency(size_t j) {
    std::vector<char> reached(tasks_.size(), 0);
    std::vector<size_t> stack{j};
    reached[j] = 1;
    while (!stack.empty()) {
      const size_t t = stack.back();
      stack.pop_back();
      for (size_t d : tasks_[t].deps) {
        if (!reached[d] && !gone(d)) {
          reached[d] = 1;
          stack.push_back(d);
        }
      }
    }
    for (size_t x : tasks_[j].accesses) {
      for (size_t a : active_) {
        const Access& earlier = accesses_[a];
        if (earlier.task == j || gone(earlier.task)) continue;
        if (earlier.buffer == accesses_[x].buffer && earlier.hi > accesses_[x].lo &&
            accesses_[x].hi > earlier.lo && !(earlier.bytes & accesses_[x].bytes).any() &&
            earlier.family == accesses_[x].family && same_strides(earlier.view, accesses_[x].view))
          ++boxes_told_apart_;
        if (!conflict(earlier, accesses_[x])) continue;
        ++conflicts_checked_;
        ASSERT_TRUE(reached[earlier.task])
            << "task " << id_of(j) << " misses a dependency on task " << id_of(earlier.task);
      }
    }
  }

  bool can_finish(size_t t) const {
    if (tasks_[t].finished) return false;
    for (size_t d : tasks_[t].deps)
      if (!tasks_[d].finished) return false;
    return true;
  }

  void finish(size_t t) {
    tasks_[t].finished = true;
    if (cfg_.lagged_retire)
      pending_retire_.push_back(t);
    else
      retire(t);
  }

  void retire(size_t t) {
    tasks_[t].retired = true;
    map_.retire(id_of(t));
  }

  void finish_and_retire(size_t t) {
    if (!tasks_[t].finished) tasks_[t].finished = true;
    if (!tasks_[t].retired) retire(t);
  }

  // Random completions (respecting edges) and, with lag, random retirements.
  void progress(size_t submitted) {
    std::vector<size_t> unfinished;
    for (size_t t = first_unfinished_; t <= submitted; ++t)
      if (!tasks_[t].finished) unfinished.push_back(t);
    const int completions = static_cast<int>(rng_() % 4);
    for (int c = 0; c < completions && !unfinished.empty(); ++c) {
      const size_t t = unfinished[rng_() % unfinished.size()];
      if (can_finish(t)) finish(t);
    }
    // Bound the window: the oldest unfinished task can always finish.
    size_t live = 0;
    for (size_t t : unfinished) live += !tasks_[t].finished;
    for (size_t t = first_unfinished_; live > 40 && t <= submitted; ++t) {
      if (!tasks_[t].finished) {
        finish(t);
        --live;
      }
    }
    while (first_unfinished_ <= submitted && tasks_[first_unfinished_].finished)
      ++first_unfinished_;
    if (cfg_.lagged_retire) {
      for (size_t i = 0; i < pending_retire_.size();) {
        if (rng_() % 3 == 0) {
          retire(pending_retire_[i]);
          pending_retire_[i] = pending_retire_.back();
          pending_retire_.pop_back();
        } else {
          ++i;
        }
      }
    }
  }

  // The map is full while submitting task j: retire whatever has finished, else finish
  // the oldest unfinished task other than j (its edges all point at finished tasks).
  void make_room(size_t j) {
    if (!pending_retire_.empty()) {
      for (size_t t : pending_retire_) retire(t);
      pending_retire_.clear();
      return;
    }
    for (size_t t = first_unfinished_; t < j; ++t) {
      if (!tasks_[t].finished) {
        ASSERT_TRUE(can_finish(t));
        tasks_[t].finished = true;
        retire(t);
        return;
      }
    }
    FAIL() << "the map is full with only task " << id_of(j) << " live";
  }

  void prune_active() {
    size_t keep = 0;
    for (size_t a : active_)
      if (!tasks_[accesses_[a].task].retired) active_[keep++] = a;
    active_.resize(keep);
  }

  Config cfg_;
  std::mt19937_64 rng_;
  TensorMap map_;
  std::vector<Task> tasks_;
  std::vector<Access> accesses_;
  std::vector<size_t> active_;  // accesses of tasks not retired yet
  std::vector<size_t> pending_retire_;
  size_t first_unfinished_ = 0;
  size_t conflicts_checked_ = 0;
  size_t boxes_told_apart_ = 0;
  size_t overflows_ = 0;
};

class TensorMapOracle : public ::testing::TestWithParam<Config> {};

TEST_P(TensorMapOracle, RandomStreamsMissNoDependencyAndAddNoNeedlessEdge) {
  Oracle oracle(GetParam());
  oracle.run();
}

std::vector<Config> oracle_configs() {
  std::vector<Config> configs;
  for (uint64_t seed : {1ull, 2ull, 3ull, 42ull, 20240601ull}) {
    configs.push_back({seed, 1 << 16, false});
    configs.push_back({seed, 1 << 16, true});
    configs.push_back({seed, 16, false});
    configs.push_back({seed, 24, true});
    configs.push_back({seed, 1 << 16, true, 1500, 0});
    configs.push_back({seed, 1 << 16, false, 1500, 2});
    configs.push_back({seed, 24, true, 1500, 8});
    configs.push_back({seed, 1 << 16, true, 1500, TensorMap::kDefaultIndexAbove, false});
    configs.push_back({seed, 24, false, 1500, 0, false});
    configs.push_back({seed, 1 << 16, true, 1500, TensorMap::kDefaultIndexAbove, true, true});
    configs.push_back({seed, 24, false, 1500, 2, true, true});
    configs.push_back({seed, 1 << 16, true, 600, TensorMap::kDefaultIndexAbove, true, false, 14});
    configs.push_back({seed, 1 << 16, false, 600, TensorMap::kDefaultIndexAbove, true, true, 14});
    configs.push_back({seed, 40, true, 600, 0, false, false, 14});
    configs.push_back({seed, 40, false, 600, TensorMap::kDefaultIndexAbove, true, true, 14});
  }
  return configs;
}

INSTANTIATE_TEST_SUITE_P(Seeds, TensorMapOracle, ::testing::ValuesIn(oracle_configs()),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           const bool tree =
                               info.param.index_above != TensorMap::kDefaultIndexAbove;
                           return "seed" + std::to_string(info.param.seed) + "_cap" +
                                  std::to_string(info.param.capacity) +
                                  (info.param.lagged_retire ? "_lagged" : "_prompt") +
                                  (tree ? "_tree" + std::to_string(info.param.index_above) : "") +
                                  (info.param.grids ? "" : "_lanes") +
                                  (info.param.tile_heavy ? "_tiles" : "") +
                                  (info.param.max_accesses != 4
                                       ? "_upto" + std::to_string(info.param.max_accesses)
                                       : "");
                         });

}  // namespace
}  // namespace simpler::rt
