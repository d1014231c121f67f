// Tensor-map lookup+insert cost per tensor access, in ns, for a few access patterns.
//
// Each scenario is a steady-state task stream: access() for every tensor of a task, then
// the retire() calls that keep the live set at its size, so retire cost is included in
// "ns/access" = time / number of access() calls. Time is the thread's CPU time, taken per
// block of 256 tasks; the median and the fastest block are printed. The build machines
// are shared (other processes evict our caches and inflate even CPU time), so the same
// run also times a reference operation — one std::unordered_map find + insert + erase at
// 10,000 keys — and prints each scenario as a ratio to it.
//
// Each task's tensors are announced with TensorMap::prefetch() before their access() calls,
// as the orchestrator's submit does. Heap allocations inside the timed passes are counted:
// the map must not allocate per access once warm. Usage: tensor_map_bench [--quick]
// [--only N] [--index-above N] [--no-prefetch] (--only: one scenario row, counted from 1,
// for profiling; --index-above: the map's linear-scan limit per reader/writer set, to find
// the crossover to its interval trees; --no-prefetch: without the hint).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <new>
#include <random>
#include <unordered_map>
#include <vector>

#include "engine/tensor_map.h"

namespace {

// Counts operator new calls made by this process (the benchmark is single-threaded).
std::atomic<size_t> g_allocations{0};

}  // namespace

// Kept out of line so that the compiler does not pair the malloc inside one with the free
// inside the other across inlined library code (-Wmismatched-new-delete).
__attribute__((noinline)) void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace {

using simpler::rt::AccessKind;
using simpler::rt::TensorMap;

constexpr size_t kBlockTasks = 256;
constexpr size_t kNever = std::numeric_limits<size_t>::max();

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

ChipTensor view(uint64_t addr, int64_t start, std::initializer_list<int64_t> shapes,
                std::initializer_list<int64_t> strides) {
  ChipTensor t{};
  t.buffer = ChipBuffer{addr, 1u << 30};
  t.start_offset = start;
  t.dtype = CHIP_DT_FLOAT32;
  t.space = CHIP_SPACE_DEVICE;
  t.ndims = static_cast<uint32_t>(shapes.size());
  uint32_t k = 0;
  for (int64_t s : shapes) t.shapes[k++] = s;
  k = 0;
  for (int64_t s : strides) t.strides[k++] = s;
  return t;
}

struct Access {
  ChipTensor view;
  AccessKind kind;
};

// Tasks of `per_task` accesses each; task t is retired once task t + window has been
// submitted. `resident` accesses (one task each, never retired) are made first.
struct Stream {
  const char* name;
  size_t per_task;
  size_t window;
  std::vector<Access> resident;
  std::vector<Access> accesses;
};

struct Timing {
  double median_ns;  // per access
  double best_ns;
  double mean_live;
  double deps_per_task;
  size_t allocations;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Timing run(const Stream& s, size_t index_above, bool hint) {
  TensorMap map(1 << 20, index_above);
  // A task's tensors side by side, as a submit has them: the hint takes them all at once.
  std::vector<ChipTensor> views;
  std::vector<AccessKind> kinds;
  for (const Access& a : s.accesses) {
    views.push_back(a.view);
    kinds.push_back(a.kind);
  }
  std::vector<uint64_t> deps;
  deps.reserve(4096);
  uint64_t task = 0;
  for (const Access& a : s.resident) {
    map.access(task++, a.view, a.kind, deps);
    deps.clear();
  }
  const uint64_t first = task;
  const size_t tasks = s.accesses.size() / s.per_task;
  Timing r{};
  // Pass 0 warms the pools and indices to their steady-state size; pass 1 is measured.
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<double> blocks;
    blocks.reserve(tasks / kBlockTasks + 1);
    size_t live_sum = 0, dep_count = 0;
    const size_t allocs_before = g_allocations.load();
    for (size_t t0 = 0; t0 + kBlockTasks <= tasks; t0 += kBlockTasks) {
      const double c0 = thread_cpu_ns();
      for (size_t t = t0; t < t0 + kBlockTasks; ++t) {
        const size_t first_view = t * s.per_task;
        if (hint) map.prefetch(&views[first_view], s.per_task);
        for (size_t k = first_view; k < first_view + s.per_task; ++k)
          map.access(task, views[k], kinds[k], deps);
        dep_count += deps.size();
        deps.clear();
        if (s.window != kNever && task >= first + s.window) map.retire(task - s.window);
        ++task;
      }
      blocks.push_back((thread_cpu_ns() - c0) / static_cast<double>(kBlockTasks * s.per_task));
      live_sum += map.live_entries();
    }
    const size_t allocations = g_allocations.load() - allocs_before;  // before median() copies
    const double n_blocks = static_cast<double>(blocks.size());
    r = Timing{median(blocks), *std::min_element(blocks.begin(), blocks.end()),
               static_cast<double>(live_sum) / n_blocks,
               static_cast<double>(dep_count) / (n_blocks * kBlockTasks), allocations};
  }
  return r;
}

// 1,000 buffers of 10 disjoint slices; tasks read two random slices and write one. The
// window keeps about 10,000 entries live.
Stream many_buffers(std::mt19937_64& rng, size_t tasks) {
  Stream s{
      "10,000 live entries over 1,000 buffers, random slices (2 reads + 1 write)", 3, 3800, {}, {}};
  constexpr uint64_t kBuffers = 1000, kSlices = 10, kSliceElems = 256;
  auto slice = [&](uint64_t b, uint64_t i) {
    return view(0x10000000 + b * kSlices * kSliceElems * 4, static_cast<int64_t>(i * kSliceElems),
                {static_cast<int64_t>(kSliceElems)}, {1});
  };
  for (uint64_t b = 0; b < kBuffers; ++b)
    for (uint64_t i = 0; i < kSlices; ++i) s.resident.push_back({slice(b, i), AccessKind::Write});
  for (size_t t = 0; t < tasks; ++t) {
    s.accesses.push_back({slice(rng() % kBuffers, rng() % kSlices), AccessKind::Read});
    s.accesses.push_back({slice(rng() % kBuffers, rng() % kSlices), AccessKind::Read});
    s.accesses.push_back({slice(rng() % kBuffers, rng() % kSlices), AccessKind::Write});
  }
  return s;
}

// A pipeline with locality: task t reads the 2-D outputs of tasks t-1 and t-7 and one of
// 64 weight tiles, and writes its own output, in a ring of 2,500 buffers; ~10,000 live.
Stream pipeline(size_t tasks) {
  Stream s{"10,000 live entries, producer->consumer pipeline (3 reads + 1 write)", 4, 2500, {}, {}};
  constexpr uint64_t kRing = 2500;
  auto out = [&](uint64_t t) {
    return view(0x40000000 + (t % kRing) * 0x10000, 0, {64, 64}, {64, 1});
  };
  auto weight = [&](uint64_t t) {
    return view(0x30000000, static_cast<int64_t>((t % 64) * 64), {64, 64}, {4096, 1});
  };
  for (size_t t = 0; t < tasks; ++t) {
    const uint64_t id = t + kRing;
    s.accesses.push_back({out(id - 1), AccessKind::Read});
    s.accesses.push_back({out(id - 7), AccessKind::Read});
    s.accesses.push_back({weight(id), AccessKind::Read});
    s.accesses.push_back({out(id), AccessKind::Write});
  }
  return s;
}

// One 512x512 matrix in 64 tiles of 64x64; tasks read one tile and update another.
Stream tiles(std::mt19937_64& rng, size_t tasks) {
  Stream s{"64 disjoint 64x64 tiles of one 512x512 buffer (read + read-write)", 2, 64, {}, {}};
  auto tile = [&](uint64_t i) {
    return view(0x20000000, static_cast<int64_t>((i / 8) * 64 * 512 + (i % 8) * 64), {64, 64},
                {512, 1});
  };
  for (uint64_t i = 0; i < 64; ++i) s.resident.push_back({tile(i), AccessKind::Write});
  for (size_t t = 0; t < tasks; ++t) {
    s.accesses.push_back({tile(rng() % 64), AccessKind::Read});
    s.accesses.push_back({tile(rng() % 64), AccessKind::ReadWrite});
  }
  return s;
}

// Tiled matmul C += A*B, 8x8x8 tiles of 64: A[i,k], B[k,j] read, C[i,j] read-write.
Stream matmul(size_t repeats) {
  Stream s{"tiled matmul, 8x8x8 tiles of 64x64 (A, B read; C read-write)", 3, 64, {}, {}};
  auto tile = [&](uint64_t addr, uint64_t r, uint64_t c) {
    return view(addr, static_cast<int64_t>(r * 64 * 512 + c * 64), {64, 64}, {512, 1});
  };
  for (size_t rep = 0; rep < repeats; ++rep)
    for (uint64_t i = 0; i < 8; ++i)
      for (uint64_t j = 0; j < 8; ++j)
        for (uint64_t k = 0; k < 8; ++k) {
          s.accesses.push_back({tile(0x50000000, i, k), AccessKind::Read});
          s.accesses.push_back({tile(0x60000000, k, j), AccessKind::Read});
          s.accesses.push_back({tile(0x70000000, i, j), AccessKind::ReadWrite});
        }
  return s;
}

// Worst case for the per-buffer scan: 2,000 disjoint slices of ONE buffer stay live.
Stream one_buffer_many_slices(std::mt19937_64& rng, size_t tasks) {
  Stream s{"2,000 live disjoint slices of ONE buffer (worst case: linear scan)", 1, kNever, {}, {}};
  auto slice = [&](uint64_t i) {
    return view(0x80000000, static_cast<int64_t>(i * 64), {64}, {1});
  };
  for (uint64_t i = 0; i < 2000; ++i) s.resident.push_back({slice(i), AccessKind::Write});
  for (size_t t = 0; t < tasks; ++t) s.accesses.push_back({slice(rng() % 2000), AccessKind::Write});
  return s;
}

// Reference: one unordered_map find + insert + erase at 10,000 keys, ns per operation
// triple, timed in the same blocks as the map.
double reference_unordered_map(size_t ops) {
  std::unordered_map<uint64_t, uint64_t> m;
  m.reserve(20000);
  for (uint64_t k = 0; k < 10000; ++k) m.emplace(k * 1024, k);
  std::vector<double> blocks;
  uint64_t sink = 0, next = 10000;
  for (size_t b = 0; b + 768 <= ops; b += 768) {
    const double c0 = thread_cpu_ns();
    for (size_t i = 0; i < 768; ++i, ++next) {
      const auto it = m.find(((next * 2654435761u) % 10000) * 1024);
      sink += it != m.end() ? it->second : 0;
      m.emplace(next * 1024, next);
      m.erase((next - 10000) * 1024);
    }
    blocks.push_back((thread_cpu_ns() - c0) / 768.0);
  }
  if (sink == 42) std::printf(" ");
  return median(blocks);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  size_t only = 0;
  size_t index_above = TensorMap::kDefaultIndexAbove;
  bool hint = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = std::strtoul(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--no-prefetch") == 0) {
      hint = false;
    } else if (std::strcmp(argv[i], "--index-above") == 0 && i + 1 < argc) {
      index_above = std::strtoul(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "usage: tensor_map_bench [--quick] [--only N] [--index-above N] "
                   "[--no-prefetch]\n");
      return 2;
    }
  }
  const size_t scale = quick ? 1 : 8;
  std::mt19937_64 rng(7);
  std::vector<Stream> streams;
  streams.push_back(many_buffers(rng, 10240 * scale));
  streams.push_back(pipeline(10240 * scale));
  streams.push_back(tiles(rng, 10240 * scale));
  streams.push_back(matmul(4 * scale));
  streams.push_back(one_buffer_many_slices(rng, 2560 * scale));

  const double reference = reference_unordered_map(30720 * scale);
  std::printf("tensor_map_bench: thread CPU ns per access() incl. amortized retire\n");
  std::printf("reference: std::unordered_map find+insert+erase at 10,000 keys = %.1f ns\n\n",
              reference);
  std::printf("%-76s %8s %8s %8s %9s %7s %9s\n", "scenario", "median", "best", "x ref", "live avg",
              "deps/t", "allocs/1M");
  for (size_t i = 0; i < streams.size(); ++i) {
    if (only != 0 && only != i + 1) continue;
    const Stream& s = streams[i];
    const Timing t = run(s, index_above, hint);
    // Operator new calls per million access() calls in the measured pass (growth of a
    // buffer's scan array past its largest size so far; zero once every size was seen).
    const double per_million =
        1e6 * static_cast<double>(t.allocations) / static_cast<double>(s.accesses.size());
    std::printf("%-76s %8.1f %8.1f %8.2f %9.0f %7.2f %9.1f\n", s.name, t.median_ns, t.best_ns,
                t.median_ns / reference, t.mean_live, t.deps_per_task, per_million);
  }
  return 0;
}
