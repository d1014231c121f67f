#include "engine/tensor_map.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/overlap.h"
#include "engine/tensor_map_index.h"
#include "engine/tensor_map_interval_tree.h"

namespace simpler::rt {
namespace {

constexpr uint32_t kNil = UINT32_MAX;

// Starts loading the cache line at `p`. (GCC 12 drops a __builtin_prefetch whose result
// nothing uses, so on x86 the instruction is written out.)
inline void prefetch_line(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}
// Entry numbers are 32-bit (kNil excluded), four to a task line, and a task's lines hold
// at most twice its live entries (a chained line holds one, its first line may be empty).
constexpr size_t kMaxCapacity = (size_t{1} << 29) - 1;
constexpr size_t kInitialReserve = 1024;

// Which columns of a row-pitched layout a view touches: every touched byte b (from the
// buffer's address) has b mod pitch in [col_lo, col_hi). Set for a box that fits its
// mixed-radix parent (overlap.h: radix_fit) with at least two dimensions, i.e. a tile or
// column slice of a row-major tensor; pitch 0 when unknown. Two views with the same
// nonzero pitch and disjoint column intervals share no byte: the scan skips them without
// the exact test (the tiles of one row band all overlap in byte range).
struct ColumnBand {
  uint32_t pitch = 0;  // bytes per row
  uint32_t col_lo = 0;
  uint32_t col_hi = 0;

  static ColumnBand of(const ViewGeometry& g) {
    ColumnBand band;
    if (!g.boxed || !g.radix_fit || !g.coords_valid || g.ndims < 2 || g.strides[0] != 1)
      return band;
    // radix_fit: coords[0] + shapes[0] <= strides[1] and strides[1] divides every higher
    // stride, so each touched element e has e mod strides[1] in that column interval.
    if (g.strides[1] > (int64_t{1} << 32)) return band;  // (also keeps the products exact)
    const uint64_t es = g.elem_size;
    const uint64_t pitch = static_cast<uint64_t>(g.strides[1]) * es;
    const uint64_t hi = static_cast<uint64_t>(g.coords[0] + g.shapes[0]) * es;
    if (pitch > UINT32_MAX || hi > pitch) return band;
    band.pitch = static_cast<uint32_t>(pitch);
    band.col_lo = static_cast<uint32_t>(static_cast<uint64_t>(g.coords[0]) * es);
    band.col_hi = static_cast<uint32_t>(hi);
    return band;
  }
  bool operator==(const ColumnBand& other) const {
    return pitch == other.pitch && col_lo == other.col_lo && col_hi == other.col_hi;
  }
  // True when the two views provably share no byte by their columns alone.
  bool apart(const ColumnBand& other) const {
    return (pitch == other.pitch) & (pitch != 0) &
           ((col_hi <= other.col_lo) | (other.col_hi <= col_lo));
  }
};

// What access() reads of each entry of a buffer, packed so that the scan walks one
// contiguous array (48 bytes per entry) instead of chasing pointers.
struct ScanRecord {
  int64_t lo;  // touched bytes lie in [lo, hi)
  int64_t hi;
  uint64_t task;
  uint32_t entry;  // Entry number
  uint16_t elem_size;
  bool write;  // Write or ReadWrite
  bool dense;  // touches all of [lo, hi); its box form is then rebuilt on demand
  ColumnBand band;
};
static_assert(sizeof(ScanRecord) == 48);

// A task's entries sit in its record's cache line, four to a line (TaskLine): filing an
// access, dropping a hidden one and retiring the task touch that one line, and a dropped
// reader's task id is beside it. Entry n is slot n % 4 of line n / 4; a task with more than
// four live entries chains further lines (ChainLinks). What an entry holds: where its
// ScanRecord sits (or, in a grid buffer, its tile and its place on the tile's readers).
struct alignas(64) TaskLine {
  uint64_t task;
  uint32_t next;          // the task's next line, or kNil; the free-list link of a free line
  uint32_t flags;         // kLive << i: entry i holds an access; kWrite << i: it is a write
                          // (which of the lane's arrays holds the ScanRecord; a tile's writer);
                          // kOnTile << i: on a tile. kChained: see ChainLinks.
  uint32_t lane[4];       // Lane number; Tile number when on_tile
  uint32_t slot[4];       // index in that lane's readers or writers array; on a tile, a
                          // reader's next reader
  uint32_t tile_prev[4];  // on a tile, a reader's previous reader
};
static_assert(sizeof(TaskLine) == 64);
constexpr uint32_t kLive = 1, kWrite = 1u << 8, kOnTile = 1u << 16, kChained = 1u << 24;
constexpr uint32_t kLiveBits = 0xF;  // a full line
// The bits of entry i, all clear while it is free (a drop clears them).
constexpr uint32_t kEntryBits = kLive | kWrite | kOnTile;

// The lines of a task with more than four entries, by line (only a chained line's is set).
struct ChainLinks {
  uint32_t first;  // the task's first line, the one the task index names
  uint32_t prev;   // in the first line: the task's last line (where entries are added)
};

// A growable array of scan records in 16 bytes (a std::vector takes 24), so that a Lane
// fits one cache line. Keeps its capacity when emptied.
class RecordArray {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == cap_; }
  const ScanRecord* data() const { return data_.get(); }
  ScanRecord& operator[](size_t i) { return data_[i]; }
  const ScanRecord& operator[](size_t i) const { return data_[i]; }
  const ScanRecord& back() const { return data_[size_ - 1]; }
  const ScanRecord* begin() const { return data_.get(); }
  const ScanRecord* end() const { return data_.get() + size_; }
  // The only call that allocates; may throw std::bad_alloc, leaving the array as it was.
  void grow() {
    const uint32_t cap = 2 * cap_ + 4;
    std::unique_ptr<ScanRecord[]> bigger(new ScanRecord[cap]);
    std::copy(begin(), end(), bigger.get());
    data_.swap(bigger);
    cap_ = cap;
  }
  ScanRecord& append() { return data_[size_++]; }  // after grow() when full()
  void pop_back() { --size_; }
  void clear() { size_ = 0; }

 private:
  std::unique_ptr<ScanRecord[]> data_;
  uint32_t size_ = 0;
  uint32_t cap_ = 0;
};

// The entries of one buffer are split into lanes by column band: the writers of one lane
// share its exact band (pitch 0 = no band), and so do its readers except in the head
// lane. An access walks the buffer's few lanes and scans those whose band is not apart
// from its own: a tile meets the records of its own column band, not those of every
// tile of the matrix. The first lane of a buffer (its head) is the one the buffer index
// names; it stays while any lane of the buffer is live, the others are released when
// they empty. Only a writer opens a lane: a reader joins the lane of its band if there
// is one, else the head, whose readers (of any band) are always scanned by a write, so
// read-mostly buffers (weights) keep one lane. A buffer has at most kMaxLanes banded
// lanes; writers of further bands join its pitch-0 lane. Each record also keeps its own
// band, which filters where a lane mixes bands (the head's readers, the pitch-0 lane).
// 64 bytes, aligned: the common case of one lane per buffer touches one cache line per
// buffer.
struct alignas(64) Lane {
  uint64_t addr = 0;  // the buffer's address
  ColumnBand band;
  uint32_t head = kNil;  // the buffer's head lane (itself for the head)
  uint32_t next = kNil;  // the buffer's next lane; also the free-list link
  RecordArray writers;   // both keep their capacity when the lane is recycled
  RecordArray readers;

  RecordArray& scan(bool write) { return write ? writers : readers; }
  bool empty() const { return writers.empty() && readers.empty(); }
};
static_assert(sizeof(Lane) == 64);
constexpr uint32_t kMaxLanes = 16;

// What a walk over a buffer's lanes found.
struct LaneWalk {
  uint32_t match = kNil;   // the lane with exactly the probe's band
  uint32_t pitch0 = kNil;  // the lane without a band
  uint32_t count = 0;      // lanes of the buffer
};

// The readers or the writers of one lane are scanned linearly while few (one contiguous
// array beats any index). A set of more than `index_above` records gets an interval tree
// over their byte ranges (nodes numbered by entry) when it is next searched, and keeps
// it while searches pay for its upkeep: it is dropped when the set shrinks below a
// quarter of the limit, or after more inserts and erases than it has records without a
// search (the readers of a buffer nobody writes are never searched, so never indexed).
// Kept apart from Lane and only looked at for sets of at least a quarter of the
// limit, which an indexed set always is.
struct SetIndex {
  uint32_t root = IntervalForest::kNil;
  uint32_t updates_unsearched = 0;  // tree inserts and erases since the last search
  bool built = false;
};

// A grid buffer: every live view of it is a tile of one grid, i.e. has the shape of the
// view that opened the buffer (a dense interval of the same length, or a box with the
// same element size, strides and extents that fits its mixed-radix parent) and sits a
// whole number of tiles away from it in every dimension (a multiple of the interval's
// length; of the extent, per box coordinate). Two such tiles either touch the same bytes
// or share none, so an access of a tile meets exactly the entries of that tile, found by
// hash on (buffer, first byte) with no scan and no overlap test: the last writer and the
// readers since, as in a map keyed by address. The first view that is not a tile of the
// grid turns the buffer into a general one (its entries move into lanes) until it empties.
// A tile that empties stays (re-opening it would cost a hash insert and erase) until
// the grid's empty tiles outnumber its live ones by far, or the grid has no entry left.
// The descriptor of the view that opened a grid, but for its start. A view with the same
// dtype, extents and strides is that view moved by whole elements, so the tile it would be
// starts at opener's first byte + (start - opener's start) * element size: a lookup by
// that byte finds it without describing the view.
struct RawShape {
  uint32_t dtype;
  uint32_t ndims;
  int64_t start;
  int64_t lo;  // the opener's first byte
  int64_t shapes[CHIP_TENSOR_MAX_DIMS];
  int64_t strides[CHIP_TENSOR_MAX_DIMS];

  void set(const ChipTensor& v, int64_t first_byte) {
    dtype = v.dtype;
    ndims = v.ndims;
    start = v.start_offset;
    lo = first_byte;
    for (uint32_t k = 0; k < ndims; ++k) {
      shapes[k] = v.shapes[k];
      strides[k] = v.strides[k];
    }
  }
  // The first byte of `v` when it has this shape; false otherwise (or on int64 overflow).
  bool first_byte(const ChipTensor& v, uint32_t elem_size, int64_t& out) const {
    if (v.dtype != dtype || v.ndims != ndims) return false;
    uint64_t diff = 0;  // one branch at the end, not two per dimension
    for (uint32_t k = 0; k < ndims; ++k)
      diff |= static_cast<uint64_t>(v.shapes[k] ^ shapes[k]) |
              static_cast<uint64_t>(v.strides[k] ^ strides[k]);
    if (diff != 0) return false;
    int64_t delta;
    return !__builtin_sub_overflow(v.start_offset, start, &delta) &&
           !__builtin_mul_overflow(delta, static_cast<int64_t>(elem_size), &delta) &&
           !__builtin_add_overflow(lo, delta, &out);
  }
};

// 48 bytes: opening and closing the grid of a buffer used once (a fresh output) touches
// one cache line of it. A grid of boxes keeps its opener's shape apart (GridShape).
// The grid's home tile, the one at the opener's first byte, is found through the grid; it
// is filed in the tile index (for contiguous views, looked up without the grid) only when
// a contiguous view finds it the slow way: a buffer written once and never read (a fresh
// output) costs one hash insert and erase (the buffer index's), not two.
struct Grid {
  uint64_t addr;
  int64_t lo;   // the opener's first byte
  int64_t len;  // a grid of intervals: their length in bytes (> 0); 0: a grid of boxes
  uint32_t elem_size;
  uint32_t home;        // the tile at byte `lo`, or kNil
  bool home_filed;      // in the tile index
  uint32_t tiles;       // list of its tiles (tile_next); the free-list link of a free grid
  uint32_t tile_count;  // tiles on the list
  uint32_t live_tiles;  // tiles with an entry
};

struct GridShape {     // of a grid of boxes, by grid number
  ViewGeometry shape;  // the view that opened the buffer
  RawShape raw;        // and its descriptor
};

// 32 bytes, two to a cache line: what an access of a known tile reads and writes. Many
// tiles are live at once (10,000 in the bench), so their size is the access's miss rate;
// the grid's tile list is apart (TensorMap::Impl::tile_next), the buffer's address is
// its grid's, and the readers are counted by walking them (a write walks them anyway).
struct alignas(32) Tile {
  int64_t lo;  // the tile's first byte: with its grid's buffer address, its key
  uint64_t writer_task;
  uint32_t writer;   // its last writer's Entry, or kNil
  uint32_t readers;  // its first reader's Entry (list by Entry::slot/tile_prev), or kNil
  uint32_t grid;
  // In a grid of intervals, their length if below 2^32 (a contiguous view of that length
  // is then known to be this tile from the tile alone); 0 otherwise (no view's length).
  uint32_t dense_len;

  bool empty() const { return writer == kNil && readers == kNil; }
  // Whether the contiguous bytes [lo, hi) of a view found at this tile's first byte are it.
  bool is_dense(int64_t lo_, int64_t hi) const {
    return static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo_) == dense_len;
  }
};
static_assert(sizeof(Tile) == 32);

// The buffer index names a grid (this bit set) or a buffer's head Lane.
constexpr uint32_t kGridTag = 0x80000000u;

// Tiles are keyed by their first byte: equal for two views of the grid's shape exactly
// when they are the same view. Whether view `g` has the shape of box `s` (a grid of
// intervals compares lengths: TensorMap::Impl::has_grid_shape):
bool same_shape(const ViewGeometry& s, const ViewGeometry& g) {
  if (g.dense || !g.boxed || !g.radix_fit || !g.coords_valid || g.ndims != s.ndims ||
      g.elem_size != s.elem_size)
    return false;
  for (int k = 0; k < s.ndims; ++k)
    if (g.strides[k] != s.strides[k] || g.shapes[k] != s.shapes[k]) return false;
  return true;
}

// Whether a view of the shape of box `s` sits a whole number of tiles from it.
bool on_grid(const ViewGeometry& s, const ViewGeometry& g) {
  for (int k = 0; k < s.ndims; ++k)
    if ((g.coords[k] - s.coords[k]) % s.shapes[k] != 0) return false;
  return true;
}

// Whether a view can open a grid: a dense interval, or a box that fits its parent.
bool grid_shape(const ViewGeometry& g) {
  return g.dense || (g.boxed && g.radix_fit && g.coords_valid);
}

}  // namespace

struct TensorMap::Impl {
  Impl(size_t cap, size_t index_above_records, bool tile_grids, bool* hint_flag)
      : capacity(cap),
        index_above(index_above_records),
        grids_enabled(tile_grids),
        hint(hint_flag) {
    if (cap > kMaxCapacity)
      throw std::invalid_argument("TensorMap capacity " + std::to_string(cap) +
                                  " exceeds the maximum of " + std::to_string(kMaxCapacity) +
                                  " entries; use a smaller tensormap_capacity");
    const size_t reserve = cap < kInitialReserve ? cap : kInitialReserve;
    lines.reserve(reserve);
    covered.reserve(64);
  }

  size_t capacity;
  size_t index_above;
  bool grids_enabled;
  bool* hint;              // TensorMap::hint_: whether prefetch() has work
  size_t room = capacity;  // capacity - live entries: one load and test per access

  std::vector<TaskLine> lines;     // the tasks' records and entries (entry n in line n / 4)
  std::vector<ChainLinks> chains;  // by line; set for the lines of chained tasks
  uint32_t free_line = kNil;
  std::vector<ViewGeometry> geometry;  // by entry number; written for non-dense views only

  std::vector<Lane> lanes;
  uint32_t free_lane = kNil;
  RecentIndex buffer_index;         // addr -> the buffer's head Lane (or its Grid)
  std::vector<SetIndex> set_index;  // [2 * lane + write] for each Lane
  IntervalForest ranges;            // node n = entry n, in its set's tree while that is built

  std::vector<Grid> grids;
  std::vector<GridShape> grid_shapes;  // as long as the largest grid of boxes' number + 1
  uint32_t free_grid = kNil;
  std::vector<Tile> tiles;
  std::vector<uint32_t> tile_next;  // by tile: its grid's tile list; the free-list link
  uint32_t free_tile = kNil;
  TaggedIndex tile_index;  // TaggedIndex::hash(addr, lo) -> Tile

  // Scratch of ungrid(): where each entry of the buffer went.
  struct Move {
    uint32_t entry;
    uint32_t lane;
    uint32_t slot;
  };
  std::vector<Move> moves;
  ViewGeometry tile_scratch;

  TaskIndex task_index;  // task id -> its first TaskLine
  uint32_t recent_line = kNil;

  // Scratch of access(): the new view, a dense entry's rebuilt box form, and the entries
  // the new write hides.
  ViewGeometry probe;
  const ChipTensor* probe_view = nullptr;  // its descriptor, during access()
  ColumnBand probe_band;
  ViewGeometry dense_scratch;
  std::vector<uint32_t> covered;

  // A lane from the free list or a new one, with no records; may throw, changing nothing.
  uint32_t take_lane(uint64_t addr, const ColumnBand& band) {
    uint32_t l = free_lane;
    if (l != kNil) {
      free_lane = lanes[l].next;
    } else {
      set_index.resize(2 * lanes.size() + 2);
      lanes.emplace_back();
      l = static_cast<uint32_t>(lanes.size() - 1);
    }
    Lane& lane = lanes[l];
    lane.addr = addr;
    lane.band = band;
    lane.head = l;
    lane.next = kNil;
    return l;
  }

  void free_lane_record(uint32_t l) {
    set_index[2 * l] = SetIndex{};  // its tree nodes are abandoned
    set_index[2 * l + 1] = SetIndex{};
    lanes[l].next = free_lane;
    free_lane = l;
  }

  // The lane the probe's entry joins, given the walk over the buffer's lanes (`head` is
  // kNone when the buffer has none). Allocates before linking anything.
  uint32_t lane_for(uint64_t addr, uint32_t head, const LaneWalk& walk, bool write) {
    if (walk.match != kNil) return walk.match;
    if (head == FlatIndex::kNone) {
      const uint32_t l = take_lane(addr, probe_band);
      try {
        buffer_index.insert(addr, l);
      } catch (...) {
        free_lane_record(l);
        throw;
      }
      return l;
    }
    if (!write) return head;
    Lane& first = lanes[head];
    if (first.writers.empty()) {  // its band only concerns writers: it may take any band
      first.band = probe_band;
      return head;
    }
    ColumnBand band = probe_band;
    if (walk.count >= kMaxLanes && band.pitch != 0) {
      if (walk.pitch0 != kNil) return walk.pitch0;
      band = ColumnBand{};
    }
    const uint32_t l = take_lane(addr, band);
    Lane& lane = lanes[l];
    Lane& h = lanes[head];  // (take_lane may have moved the lanes)
    lane.head = head;
    lane.next = h.next;
    h.next = l;
    return l;
  }

  // Lane `l` has no records left: a lane other than the head leaves its buffer; the
  // head goes (with its buffer) when it is alone and `release_empty_buffer`.
  void release_lane_if_empty(uint32_t l, bool release_empty_buffer) {
    if (!lanes[l].empty()) return;
    const uint32_t head = lanes[l].head;
    if (l != head) {
      uint32_t prev = head;
      while (lanes[prev].next != l) prev = lanes[prev].next;
      lanes[prev].next = lanes[l].next;
      free_lane_record(l);
    }
    const Lane& h = lanes[head];
    if (release_empty_buffer && h.next == kNil && h.empty()) {
      buffer_index.erase(h.addr);
      free_lane_record(head);
    }
  }

  // An entry's fields (see TaskLine).
  uint32_t& lane_of(uint32_t n) { return lines[n >> 2].lane[n & 3]; }
  uint32_t& slot_of(uint32_t n) { return lines[n >> 2].slot[n & 3]; }
  uint32_t& prev_of(uint32_t n) { return lines[n >> 2].tile_prev[n & 3]; }
  bool is_write(uint32_t n) const { return (lines[n >> 2].flags & (kWrite << (n & 3))) != 0; }
  bool is_on_tile(uint32_t n) const { return (lines[n >> 2].flags & (kOnTile << (n & 3))) != 0; }
  uint64_t task_of(uint32_t n) const { return lines[n >> 2].task; }

  // The first line of `task`, found or filed.
  inline __attribute__((always_inline)) uint32_t task_record(uint64_t task) {
    // A task's accesses arrive one after another: remember the last one's line (forgotten
    // when it is released, so it is still `task`'s while its id matches).
    if (recent_line != kNil && lines[recent_line].task == task) return recent_line;
    // A new task (its slot free, nothing overflowed) and a free line: no probe, no
    // allocation. (Mostly: tasks retire in order and their lines are reused, the last
    // freed first, while it is still in the cache.)
    const uint32_t fresh = free_line;
    if (fresh != kNil && task_index.try_insert_direct(task, fresh)) {
      free_line = lines[fresh].next;
      start_line(fresh, task);
      return recent_line = fresh;
    }
    return file_task(task);
  }

  void start_line(uint32_t l, uint64_t task) {
    TaskLine& line = lines[l];
    line.task = task;
    line.next = kNil;
    line.flags = 0;
  }

  // The record of `task`, found or filed (one probe).
  __attribute__((noinline)) uint32_t file_task(uint64_t task) {
    reserve_line();
    const uint32_t fresh = free_line;
    const uint32_t rec = task_index.find_or_insert(task, fresh);
    if (rec != FlatIndex::kNone) return recent_line = rec;
    free_line = lines[fresh].next;
    start_line(fresh, task);
    return recent_line = fresh;
  }

  // A free line on the free list; may throw, changing nothing.
  void reserve_line() {
    if (free_line != kNil) return;
    lines.emplace_back();
    lines.back().next = kNil;
    free_line = static_cast<uint32_t>(lines.size() - 1);
  }

  // Frees the task's lines, its first line first (the next task takes it).
  inline __attribute__((always_inline)) void release_task(uint32_t first) {
    if (first == recent_line) recent_line = kNil;
    task_index.erase(lines[first].task);
    uint32_t last = first;
    if ((lines[first].flags & kChained) != 0)
      while (lines[last].next != kNil) last = lines[last].next;
    lines[last].next = free_line;
    free_line = first;
  }

  // A new entry of the task at line `first`, live with its kind, lane (or tile) and slot
  // (or next reader), on the task's last line (a new line when that is full). May throw
  // std::bad_alloc before changing anything but the task's lines (a new empty one is harmless); the
  // caller fills in the fields without allocating.
  template <bool kTile>
  inline __attribute__((always_inline)) uint32_t file_entry(uint32_t first, bool write,
                                                            bool needs_geometry, uint32_t lane,
                                                            uint32_t slot) {
    uint32_t l = first;
    uint32_t flags = lines[first].flags;
    if (__builtin_expect((flags & kChained) != 0 || (flags & kLiveBits) == kLiveBits, 0)) {
      l = line_with_room(first);
      flags = lines[l].flags;
    }
    if (needs_geometry && geometry.size() < 4 * lines.size()) geometry.resize(4 * lines.size());
    TaskLine& line = lines[l];
    const uint32_t i = static_cast<uint32_t>(__builtin_ctz(~flags & kLiveBits));
    line.flags = flags | (((kTile ? kLive | kOnTile : kLive) | (write ? kWrite : 0)) << i);
    line.lane[i] = lane;
    line.slot[i] = slot;
    line.tile_prev[i] = kNil;
    --room;
    return 4 * l + i;
  }

  // The last line of the task at line `first` when it has room, else a new one chained
  // after it; may throw (growth), changing nothing.
  __attribute__((noinline)) uint32_t line_with_room(uint32_t first) {
    const uint32_t last = (lines[first].flags & kChained) != 0 ? chains[first].prev : first;
    return (lines[last].flags & kLiveBits) == kLiveBits ? add_line(first, last) : last;
  }

  // Chains a new line after `last`, the last line of the task at line `first`.
  __attribute__((noinline)) uint32_t add_line(uint32_t first, uint32_t last) {
    reserve_line();
    if (chains.size() < lines.size()) chains.resize(lines.size());
    const uint32_t l = free_line;
    free_line = lines[l].next;
    start_line(l, lines[first].task);
    lines[l].flags = kChained;
    if ((lines[first].flags & kChained) == 0) {
      lines[first].flags |= kChained;
      chains[first] = ChainLinks{first, l};
    } else {
      chains[first].prev = l;
    }
    chains[l] = ChainLinks{first, last};
    lines[last].next = l;
    return l;
  }

  // Every allocation happens before the first link is made, so a throw leaves the map
  // consistent (at worst with an empty buffer or task record, which is harmless).
  // `twin` is a covered writer of the same lane with the same byte range whose scan slot
  // (and tree node) the new entry takes over, or kNil; the caller then drops the twin
  // without touching its lane.
  void insert(uint64_t task, uint64_t addr, uint32_t first_lane, const LaneWalk& walk,
              const ViewGeometry& g, bool write, uint32_t twin) {
    const uint32_t b = lane_for(addr, first_lane, walk, write);
    const uint32_t t = task_record(task);
    RecordArray& scan = lanes[b].scan(write);
    if (twin == kNil && scan.full()) scan.grow();
    // A tree node per entry number, the new line's included (nodes only trees use).
    if (built_index(b, write) != nullptr) ranges.reserve_nodes(4 * (lines.size() + 1));
    const uint32_t slot = twin != kNil ? slot_of(twin) : static_cast<uint32_t>(scan.size());
    const uint32_t n = file_entry</*kTile=*/false>(t, write, !g.dense, b, slot);
    // Field by field: a temporary record would be stored in pieces and reloaded whole,
    // which stalls store forwarding.
    ScanRecord& r = twin != kNil ? scan[slot] : scan.append();
    r.lo = g.lo;
    r.hi = g.hi;
    r.task = task;
    r.entry = n;
    r.elem_size = static_cast<uint16_t>(g.elem_size);
    r.write = write;
    r.dense = g.dense;
    r.band = probe_band;
    if (!g.dense) copy_geometry(g, geometry[n]);
    if (SetIndex* index = built_index(b, write)) {
      if (twin != kNil) {
        ranges.replace(index->root, twin, n);
      } else {
        ranges.insert(index->root, n, g.lo, g.hi);
        note_update(*index, scan.size());
      }
    }
  }

  // Swap-removes the entry's scan record (or takes it off its tile).
  void unlink_from_buffer(uint32_t n, bool release_empty_buffer) {
    if (is_on_tile(n)) return unlink_from_tile(n, release_empty_buffer);
    const uint32_t lane = lane_of(n);
    const bool write = is_write(n);
    RecordArray& scan = lanes[lane].scan(write);
    SetIndex* index = built_index(lane, write);
    if (index != nullptr) ranges.erase(index->root, n);
    const ScanRecord& last = scan.back();
    if (last.entry != n) {
      const uint32_t slot = slot_of(n);
      scan[slot] = last;
      slot_of(last.entry) = slot;
    }
    scan.pop_back();
    if (index != nullptr) {
      if (scan.size() * 4 < index_above)
        *index = SetIndex{};  // its nodes are abandoned
      else
        note_update(*index, scan.size());
    }
    if (scan.empty()) release_lane_if_empty(lane, release_empty_buffer);
  }

  // Entry `n` leaves its task (which goes when that was its last entry) and frees its room.
  inline __attribute__((always_inline)) void drop_from_task(uint32_t n) {
    const uint32_t l = n >> 2;
    TaskLine& line = lines[l];
    line.flags &= ~(kEntryBits << (n & 3));
    ++room;
    if ((line.flags & kLiveBits) != 0) return;
    if ((line.flags & kChained) != 0)
      line_emptied(l);
    else
      release_task(l);
  }

  // Line `l` of a chained task has no live entry left: the task goes when its other lines
  // have none either, else the line leaves the chain (unless it is the first).
  __attribute__((noinline)) void line_emptied(uint32_t l) {
    const uint32_t first = chains[l].first;
    bool live = false;
    for (uint32_t x = first; x != kNil; x = lines[x].next)
      live |= (lines[x].flags & kLiveBits) != 0;
    if (!live) return release_task(first);
    if (l == first) return;
    const uint32_t prev = chains[l].prev;
    const uint32_t next = lines[l].next;
    lines[prev].next = next;
    if (next != kNil)
      chains[next].prev = prev;
    else
      chains[first].prev = prev;
    lines[l].next = free_line;
    free_line = l;
  }

  // The tree of lane `b`'s writers or readers, or null while they are scanned.
  SetIndex* built_index(uint32_t b, bool write) {
    if (lanes[b].scan(write).size() * 4 < index_above) return nullptr;  // never indexed
    SetIndex& index = set_index[2 * b + write];
    return index.built ? &index : nullptr;
  }

  static void note_update(SetIndex& index, size_t records) {
    if (++index.updates_unsearched > records) index = SetIndex{};  // abandons its nodes
  }

  // The exact test of the probe against an entry whose byte range meets the probe's:
  // records a dependency when they overlap, and notes the entry if this write hides it.
  inline __attribute__((always_inline)) void consider(const ScanRecord& e, uint64_t task,
                                                      bool write, std::vector<uint64_t>& deps,
                                                      size_t deps_before) {
    const ViewGeometry& g = probe;
    Relation r;
    if (e.dense && g.dense)
      r = {true, g.lo <= e.lo && e.hi <= g.hi};
    else if (e.dense)
      r = relate(g, interval_geometry(e.lo, e.hi, e.elem_size, dense_scratch));
    else
      r = relate(g, geometry[e.entry]);
    if (!r.overlap) return;
    if (e.task != task && (deps.size() == deps_before || deps.back() != e.task))
      deps.push_back(e.task);
    // A covered entry is hidden for good: whoever overlaps it later overlaps this
    // write and so waits for it, and this write waits for the entry.
    if (write && r.covers) covered.push_back(e.entry);
  }

  // The indexed path of scan_conflicts, out of line to keep the linear scan tight.
  __attribute__((noinline)) void search_tree(uint32_t root, const RecordArray& records,
                                             uint64_t task, bool write, std::vector<uint64_t>& deps,
                                             size_t deps_before) {
    ranges.query(root, probe.lo, probe.hi, [&](uint32_t n) {
      const ScanRecord& e = records[slot_of(n)];
      if (!probe_band.apart(e.band)) consider(e, task, write, deps, deps_before);
    });
  }

  // Appends the tasks of the entries among lane `b`'s writers (or readers) that the
  // probe conflicts with, and notes those a write hides.
  void scan_conflicts(uint32_t b, bool writers, uint64_t task, bool write,
                      std::vector<uint64_t>& deps, size_t deps_before) {
    const ViewGeometry& g = probe;
    const RecordArray& records = lanes[b].scan(writers);
    if (records.size() * 4 >= index_above) {
      SetIndex& index = set_index[2 * b + writers];
      if (!index.built && records.size() > index_above) {
        ranges.reserve_nodes(4 * lines.size());  // a node per entry number (may throw)
        for (const ScanRecord& r : records) ranges.insert(index.root, r.entry, r.lo, r.hi);
        index.built = true;
      }
      if (index.built) {
        index.updates_unsearched = 0;
        search_tree(index.root, records, task, write, deps, deps_before);
        return;
      }
    }
    // Locals: the loop then keeps the probe in registers (deps may alias nothing, but
    // the compiler cannot know that).
    const int64_t lo = g.lo, hi = g.hi;
    const ColumnBand band = probe_band;
    // Two passes per chunk: a branch-free filter that collects the candidates, then the
    // exact test of each. The filter's outcome is data dependent (tiles of one row band
    // meet in byte range and differ in columns), and mispredicted branches dominated.
    constexpr size_t kChunk = 64;
    uint32_t hits[kChunk];
    const ScanRecord* data = records.data();
    const size_t count = records.size();
    for (size_t first = 0; first < count; first += kChunk) {
      const size_t end = count - first < kChunk ? count : first + kChunk;
      size_t n = 0;
      for (size_t i = first; i < end; ++i) {
        const ScanRecord& e = data[i];
        hits[n] = static_cast<uint32_t>(i);
        n += static_cast<size_t>((e.lo < hi) & (lo < e.hi) & !band.apart(e.band));
      }
      for (size_t k = 0; k < n; ++k) consider(data[hits[k]], task, write, deps, deps_before);
    }
  }

  // Scans the writers (and for a write the readers) of every lane of the buffer whose band
  // is not apart from the probe's, starting at lane `head`, and for a write the head's
  // readers in any case (they mix bands).
  LaneWalk scan_lanes(uint32_t head, uint64_t task, bool write, std::vector<uint64_t>& deps,
                      size_t deps_before) {
    LaneWalk walk;
    for (uint32_t l = head; l != kNil; l = lanes[l].next) {
      const ColumnBand band = lanes[l].band;
      ++walk.count;
      if (band == probe_band) walk.match = l;
      if (band.pitch == 0) walk.pitch0 = l;
      const bool near = !probe_band.apart(band);
      if (near) scan_conflicts(l, /*writers=*/true, task, write, deps, deps_before);
      if (write && (near || l == head))
        scan_conflicts(l, /*writers=*/false, task, write, deps, deps_before);
    }
    return walk;
  }

  // --- Grid buffers (see Grid) ---

  // Inline (as drop_from_task): a call per dependency or hidden entry cost more than its body.
  // Skips an id equal to the last one in `deps`, even one an earlier access appended (the
  // caller takes the union): no size to note on the way in.
  inline __attribute__((always_inline)) void add_dep(uint64_t dep, uint64_t task,
                                                     std::vector<uint64_t>& deps) {
    if (dep != task && (deps.empty() || deps.back() != dep)) deps.push_back(dep);
  }

  // A grid for the buffer at `addr`, opened by the probe and named by the buffer index;
  // may throw, changing nothing.
  uint32_t open_grid(uint64_t addr) {
    uint32_t gi = free_grid;
    if (gi != kNil) {
      free_grid = grids[gi].tiles;
    } else {
      grids.emplace_back();
      gi = static_cast<uint32_t>(grids.size() - 1);
    }
    try {
      if (!probe.dense && grid_shapes.size() <= gi) grid_shapes.resize(gi + 1);
      buffer_index.insert(addr, gi | kGridTag);
    } catch (...) {
      grids[gi].tiles = free_grid;
      free_grid = gi;
      throw;
    }
    Grid& gr = grids[gi];
    gr.addr = addr;
    gr.lo = probe.lo;
    gr.len = probe.dense ? probe.hi - probe.lo : 0;
    gr.elem_size = probe.elem_size;
    gr.home = kNil;
    gr.home_filed = false;
    gr.tiles = kNil;
    gr.tile_count = 0;
    gr.live_tiles = 0;
    if (!probe.dense) {
      copy_geometry(probe, grid_shapes[gi].shape);
      grid_shapes[gi].raw.set(*probe_view, probe.lo);
    }
    return gi;
  }

  // A new tile of grid `gi` starting at byte `lo`, with no entries; may throw, changing
  // nothing.
  uint32_t open_tile(uint32_t gi, uint64_t addr, int64_t lo) {
    uint32_t ti = free_tile;
    if (ti != kNil) {
      free_tile = tile_next[ti];
    } else {
      tile_next.emplace_back();  // (first: a throw in the second leaves an unused slot)
      tiles.emplace_back();
      ti = static_cast<uint32_t>(tiles.size() - 1);
    }
    const bool home = lo == grids[gi].lo;
    try {
      if (!home) file_tile(TaggedIndex::hash(addr, lo), ti);
    } catch (...) {
      tile_next[ti] = free_tile;
      free_tile = ti;
      throw;
    }
    Grid& gr = grids[gi];
    if (home) {
      gr.home = ti;
      gr.home_filed = false;
    }
    const uint32_t dense_len =
        gr.len > 0 && gr.len <= UINT32_MAX ? static_cast<uint32_t>(gr.len) : 0;
    tiles[ti] = Tile{lo, 0, kNil, kNil, gi, dense_len};
    tile_next[ti] = gr.tiles;
    gr.tiles = ti;
    ++gr.tile_count;
    return ti;
  }

  // The tile of the buffer at `addr` that starts at byte `lo`, or kNil.
  uint32_t find_tile(uint64_t addr, int64_t lo) const {
    const uint32_t ti = tile_index.find(TaggedIndex::hash(addr, lo), [&](uint32_t x) {
      return tiles[x].lo == lo && grids[tiles[x].grid].addr == addr;
    });
    return ti == TaggedIndex::kNone ? kNil : ti;
  }

  // The tile of grid `gi` (of the buffer at `addr`) that starts at byte `lo`, or kNil.
  uint32_t grid_tile(uint32_t gi, uint64_t addr, int64_t lo) const {
    return lo == grids[gi].lo ? grids[gi].home : find_tile(addr, lo);
  }

  // Takes tile `x` of grid `gr` out of the tile index (and off its grid's home).
  void unfile_tile(Grid& gr, uint32_t x) {
    const Tile& t = tiles[x];
    const bool home = x == gr.home;
    if (!home || gr.home_filed) tile_index.erase(TaggedIndex::hash(gr.addr, t.lo), x);
    if (home) gr.home = kNil;
  }

  // Closes the empty tiles of grid `gi` (all of them when `all`, then the grid leaves its
  // buffer too).
  void close_tiles(uint32_t gi, bool all) {
    Grid& gr = grids[gi];
    uint32_t* link = &gr.tiles;
    while (*link != kNil) {
      const uint32_t x = *link;
      if (!all && !tiles[x].empty()) {
        link = &tile_next[x];
        continue;
      }
      *link = tile_next[x];
      unfile_tile(gr, x);
      tile_next[x] = free_tile;
      free_tile = x;
      --gr.tile_count;
    }
    if (all) {
      buffer_index.erase(gr.addr);
      gr.tiles = free_grid;
      free_grid = gi;
    }
  }

  // close_tiles(gi, true) of a grid whose one tile is `ti`, without the walk.
  void close_only_tile(uint32_t gi, uint32_t ti) {
    Grid& gr = grids[gi];
    unfile_tile(gr, ti);
    tile_next[ti] = free_tile;
    free_tile = ti;
    gr.tile_count = 0;
    buffer_index.erase(gr.addr);
    gr.tiles = free_grid;
    free_grid = gi;
  }

  // Tile `ti` has no entries left.
  void tile_emptied(uint32_t ti) {
    const uint32_t gi = tiles[ti].grid;
    Grid& gr = grids[gi];
    if (--gr.live_tiles == 0) {
      if (gr.tile_count == 1)
        close_only_tile(gi, ti);  // (a fresh output's grid, retired)
      else
        close_tiles(gi, /*all=*/true);
    } else if (gr.tile_count > 2 * gr.live_tiles + 16)
      close_tiles(gi, /*all=*/false);
  }

  inline __attribute__((always_inline)) void unlink_from_tile(uint32_t n,
                                                              bool release_empty_buffer) {
    unlink_from_tile(lines[n >> 2], n & 3, release_empty_buffer);
  }
  // The same for entry i of `line` (the caller's loaded line: no address to rebuild).
  inline __attribute__((always_inline)) void unlink_from_tile(const TaskLine& line, uint32_t i,
                                                              bool release_empty_buffer) {
    const uint32_t ti = line.lane[i];
    Tile& t = tiles[ti];
    if ((line.flags & (kWrite << i)) != 0) {
      t.writer = kNil;
    } else {
      const uint32_t prev = line.tile_prev[i];
      const uint32_t next = line.slot[i];
      if (prev != kNil)
        slot_of(prev) = next;
      else
        t.readers = next;
      if (next != kNil) prev_of(next) = prev;
    }
    if (t.empty()) {
      if (release_empty_buffer)
        tile_emptied(ti);
      else
        --grids[t.grid].live_tiles;  // (not reached: only retire() unlinks a tile's entries)
    }
  }

  // access() of a tile of grid `gi` (kNil: the buffer is new, and the probe opens its
  // grid), which is tile `ti` (kNil: a tile with no entries yet). Its entries are exactly
  // the bytes of the probe: a read waits for the writer, a write for the writer and the
  // readers, and hides them all.
  inline __attribute__((always_inline)) bool grid_access(uint64_t addr, uint32_t gi, uint32_t ti,
                                                         uint64_t task, bool write,
                                                         std::vector<uint64_t>& deps) {
    // What a write hides (the tile's writer and readers) only matters at capacity: count
    // it there, and walk the readers once otherwise (their dependencies as they are dropped).
    if (room == 0) {
      size_t hidden = 0;
      if (ti != kNil && write) {
        hidden += tiles[ti].writer != kNil;
        for (uint32_t r = tiles[ti].readers; r != kNil; r = slot_of(r)) ++hidden;
      }
      if (hidden == 0) return false;
    }
    if (ti != kNil && tiles[ti].writer != kNil) add_dep(tiles[ti].writer_task, task, deps);
    // Every allocation before the first link (a throw leaves at most an empty grid, tile
    // or task record, which is harmless).
    const uint32_t tr = task_record(task);
    if (gi == kNil) gi = open_grid(addr);
    if (ti == kNil) ti = open_tile(gi, addr, probe.lo);
    Tile& t = tiles[ti];
    // (A tile's writer has no reader links: its slot is unused.)
    const uint32_t n = file_entry</*kTile=*/true>(tr, write, false, ti, t.readers);
    if (t.empty()) ++grids[gi].live_tiles;
    if (!write) {
      if (t.readers != kNil) prev_of(t.readers) = n;
      t.readers = n;
    }
    if (write) {
      // After linking the new entry, so that its task record stays.
      if (t.writer != kNil) drop_from_task(t.writer);
      for (uint32_t r = t.readers; r != kNil;) {
        const uint32_t next = slot_of(r);
        add_dep(task_of(r), task, deps);
        drop_from_task(r);
        r = next;
      }
      t.writer = n;
      t.writer_task = task;
      t.readers = kNil;
    }
    return true;
  }

  // The geometry of the tile of grid `gr` at byte `lo`.
  const ViewGeometry& tile_geometry(uint32_t gi, int64_t lo, ViewGeometry& out) {
    const Grid& gr = grids[gi];
    if (gr.len != 0) return interval_geometry(lo, lo + gr.len, gr.elem_size, out);
    move_box(grid_shapes[gi].shape, lo, out);
    return out;
  }

  // Whether the probe has the shape of grid `gi`'s tiles (see same_shape).
  bool has_grid_shape(uint32_t gi) const {
    const Grid& gr = grids[gi];
    if (gr.len != 0) return probe.dense && probe.hi - probe.lo == gr.len;
    return same_shape(grid_shapes[gi].shape, probe);
  }

  // Whether the probe, of that shape, sits on the grid (see on_grid).
  bool on_grid_of(uint32_t gi) const {
    const Grid& gr = grids[gi];
    if (gr.len != 0) return (gr.lo - probe.lo) % gr.len == 0;
    return on_grid(grid_shapes[gi].shape, probe);
  }

  // What conflicts() finds in a grid buffer: the probe against each tile.
  void grid_conflicts(uint32_t gi, bool write, std::vector<uint64_t>& deps) {
    constexpr uint64_t kNoTask = ~uint64_t{0};
    const Grid& gr = grids[gi];
    uint32_t ti = kNil;
    if (has_grid_shape(gi)) {
      ti = grid_tile(gi, gr.addr, probe.lo);
    }
    for (uint32_t x = ti != kNil ? ti : gr.tiles; x != kNil; x = ti != kNil ? kNil : tile_next[x]) {
      const Tile& t = tiles[x];
      if (ti == kNil && !relate(probe, tile_geometry(gi, t.lo, tile_scratch)).overlap) continue;
      if (t.writer != kNil) add_dep(t.writer_task, kNoTask, deps);
      if (write)
        for (uint32_t r = t.readers; r != kNil; r = slot_of(r)) add_dep(task_of(r), kNoTask, deps);
    }
  }

  // Turns grid buffer `gi` into a general one: its entries move into lanes, as if they
  // had been recorded there. May throw std::bad_alloc, changing nothing.
  void ungrid(uint32_t gi) {
    const uint64_t addr = grids[gi].addr;
    size_t count = 0;
    for (uint32_t x = grids[gi].tiles; x != kNil; x = tile_next[x]) {
      count += tiles[x].writer != kNil;
      for (uint32_t r = tiles[x].readers; r != kNil; r = slot_of(r)) ++count;
    }
    moves.clear();
    moves.reserve(count);
    if (geometry.size() < 4 * lines.size()) geometry.resize(4 * lines.size());
    const ColumnBand probe_band_saved = probe_band;
    buffer_index.erase(addr);  // (the lanes' head takes its place: no growth)
    try {
      for (uint32_t x = grids[gi].tiles; x != kNil; x = tile_next[x]) {
        const Tile& t = tiles[x];
        const ViewGeometry& g = tile_geometry(gi, t.lo, tile_scratch);
        probe_band = ColumnBand::of(g);
        if (t.writer != kNil) move_to_lane(addr, g, t.writer, t.writer_task, true);
        for (uint32_t r = t.readers; r != kNil; r = slot_of(r))
          move_to_lane(addr, g, r, task_of(r), false);
      }
    } catch (...) {
      const uint32_t head = buffer_index.find(addr);
      for (uint32_t l = head == FlatIndex::kNone ? kNil : head; l != kNil;) {
        const uint32_t next = lanes[l].next;
        lanes[l].writers.clear();
        lanes[l].readers.clear();
        free_lane_record(l);
        l = next;
      }
      buffer_index.erase(addr);
      buffer_index.insert(addr, gi | kGridTag);  // (no growth: it held this key before)
      probe_band = probe_band_saved;
      throw;
    }
    probe_band = probe_band_saved;
    for (const Move& m : moves) {
      lane_of(m.entry) = m.lane;
      slot_of(m.entry) = m.slot;
      prev_of(m.entry) = kNil;
      TaskLine& line = lines[m.entry >> 2];
      line.flags &= ~(kOnTile << (m.entry & 3));
    }
    for (uint32_t x = grids[gi].tiles; x != kNil;) {
      const uint32_t next = tile_next[x];
      unfile_tile(grids[gi], x);
      tile_next[x] = free_tile;
      free_tile = x;
      x = next;
    }
    grids[gi].tiles = free_grid;
    free_grid = gi;
  }

  // Adds entry `n` (view `g`, whose band is probe_band) to the lanes of the buffer at
  // `addr` as access() would place it, noting where in `moves`.
  void move_to_lane(uint64_t addr, const ViewGeometry& g, uint32_t n, uint64_t task, bool write) {
    const uint32_t head = buffer_index.find(addr);
    LaneWalk walk;
    if (head != FlatIndex::kNone) {
      for (uint32_t l = head; l != kNil; l = lanes[l].next) {
        ++walk.count;
        if (lanes[l].band == probe_band) walk.match = l;
        if (lanes[l].band.pitch == 0) walk.pitch0 = l;
      }
    }
    const uint32_t b = lane_for(addr, head, walk, write);
    RecordArray& scan = lanes[b].scan(write);
    if (scan.full()) scan.grow();
    const uint32_t slot = static_cast<uint32_t>(scan.size());
    ScanRecord& r = scan.append();
    r.lo = g.lo;
    r.hi = g.hi;
    r.task = task;
    r.entry = n;
    r.elem_size = static_cast<uint16_t>(g.elem_size);
    r.write = write;
    r.dense = g.dense;
    r.band = probe_band;
    if (!g.dense) copy_geometry(g, geometry[n]);
    moves.push_back(Move{n, b, slot});
  }

  // Files tile `ti` under hash `h` (may throw, changing nothing). The index only grows:
  // once it has left L1 (32 KB), TensorMap::prefetch has work.
  void file_tile(uint32_t h, uint32_t ti) {
    tile_index.insert(h, ti);
    *hint = tile_index.bytes() > 32768;
  }

  // See TensorMap::prefetch. A contiguous view's tile is found by the hash of its first
  // byte, start × element size: its index slot is loaded for every view (for another view
  // a wasted load, cheaper than the test), then the tiles those slots name; independent
  // loads, so their misses overlap.
  void prefetch_views(const ChipTensor* views, size_t n) const {
    constexpr size_t kMax = 8;  // a task's first tensors
    uint32_t hashes[kMax];
    if (n > kMax) n = kMax;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t first =
          static_cast<uint64_t>(views[i].start_offset) * chip_dtype_size(views[i].dtype);
      hashes[i] = TaggedIndex::hash(views[i].buffer.addr, static_cast<int64_t>(first));
      prefetch_line(tile_index.home_slot(hashes[i]));
    }
    for (size_t i = 0; i < n; ++i) {
      const uint32_t ti = tile_index.home_guess(hashes[i]);
      if (ti < tiles.size()) prefetch_line(&tiles[ti]);
    }
  }

  bool access(uint64_t task, const ChipTensor& view, AccessKind kind, std::vector<uint64_t>& deps) {
    const bool write = kind != AccessKind::Read;
    const uint64_t addr = view.buffer.addr;
    // A known tile of a grid buffer needs no geometry: a contiguous view is looked up by
    // its byte range (without the grid), another one by its start if it has the shape of
    // the view that opened the grid.
    const uint32_t elem_size = chip_dtype_size(view.dtype);
    int64_t lo, hi;
    const bool contiguous = elem_size != 0 && contiguous_bytes(view, elem_size, lo, hi);
    uint32_t head = FlatIndex::kNone;
    uint32_t ti = kNil;
    if (contiguous) {
      ti = find_tile(addr, lo);
      if (ti != kNil && !tiles[ti].is_dense(lo, hi)) ti = kNil;
    } else {
      head = buffer_index.find(addr);
      if (head != FlatIndex::kNone && (head & kGridTag) != 0 && elem_size != 0 &&
          grids[head & ~kGridTag].len == 0 &&
          grid_shapes[head & ~kGridTag].raw.first_byte(view, elem_size, lo))
        ti = grid_tile(head & ~kGridTag, addr, lo);
    }
    if (ti != kNil) return grid_access(addr, tiles[ti].grid, ti, task, write, deps);
    if (contiguous) {
      head = buffer_index.find(addr);
      if (head != FlatIndex::kNone && (head & kGridTag) != 0) {  // its home tile?
        Grid& gr = grids[head & ~kGridTag];
        if (gr.lo == lo && gr.home != kNil && tiles[gr.home].is_dense(lo, hi)) {
          // Looked up again: filed from now on (may throw, changing nothing).
          file_tile(TaggedIndex::hash(addr, lo), gr.home);
          gr.home_filed = true;
          return grid_access(addr, head & ~kGridTag, gr.home, task, write, deps);
        }
      }
    }
    ViewGeometry& g = probe;
    if (contiguous)
      interval_geometry(lo, hi, elem_size, g);  // what describe_view gives it, cheaper
    else
      describe_view(view, g);
    if (g.empty) return true;  // touches no byte: orders nothing
    probe_view = &view;
    if (g.dense && !contiguous && head != FlatIndex::kNone && (head & kGridTag) != 0) {
      // a known tile of a grid of intervals
      ti = grid_tile(head & ~kGridTag, addr, g.lo);
      if (ti != kNil && tiles[ti].is_dense(g.lo, g.hi))
        return grid_access(addr, tiles[ti].grid, ti, task, write, deps);
    }
    if (head != FlatIndex::kNone && (head & kGridTag) != 0) {
      const uint32_t gi = head & ~kGridTag;
      if (has_grid_shape(gi)) {
        ti = grid_tile(gi, addr, probe.lo);
        if (ti != kNil) return grid_access(addr, gi, ti, task, write, deps);
        if (on_grid_of(gi)) return grid_access(addr, gi, kNil, task, write, deps);
      }
      ungrid(gi);
      head = buffer_index.find(addr);
    } else if (head == FlatIndex::kNone && grids_enabled && grid_shape(g)) {
      return grid_access(addr, kNil, kNil, task, write, deps);
    }
    probe_band = ColumnBand::of(g);
    covered.clear();
    const size_t deps_before = deps.size();  // (the paths above return)
    LaneWalk walk;
    if (head != FlatIndex::kNone) walk = scan_lanes(head, task, write, deps, deps_before);
    if (room + covered.size() == 0) {
      deps.resize(deps_before);
      return false;
    }
    // A write usually hides a writer with the very same byte range (a rewritten tile or
    // slice): the new entry then takes its place as is (scan slot and tree node).
    uint32_t twin = kNil;
    if (write && walk.match != kNil) {
      const RecordArray& writers = lanes[walk.match].writers;
      for (uint32_t n : covered) {
        if (is_write(n) && lane_of(n) == walk.match && writers[slot_of(n)].lo == g.lo &&
            writers[slot_of(n)].hi == g.hi) {
          twin = n;
          break;
        }
      }
    }
    // Insert before dropping: if an allocation throws, nothing has been dropped yet.
    insert(task, addr, head, walk, g, write, twin);
    for (uint32_t n : covered) {
      // The new entry is in this buffer, so it stays.
      if (n != twin) unlink_from_buffer(n, /*release_empty_buffer=*/false);
      drop_from_task(n);
    }
    return true;
  }

  void conflicts(const ChipTensor& view, AccessKind kind, std::vector<uint64_t>& deps) {
    describe_view(view, probe);
    if (probe.empty) return;
    const uint32_t head = buffer_index.find(view.buffer.addr);
    if (head == FlatIndex::kNone) return;
    const bool write = kind != AccessKind::Read;
    const size_t deps_before = deps.size();
    if ((head & kGridTag) != 0) return grid_conflicts(head & ~kGridTag, write, deps);
    probe_band = ColumnBand::of(probe);
    constexpr uint64_t kNoTask = ~uint64_t{0};  // matches no entry
    scan_lanes(head, kNoTask, write, deps, deps_before);
    covered.clear();  // nothing is recorded, so nothing is hidden
  }

  void retire(uint64_t task) {
    const uint32_t t = task_index.find(task);
    if (t == FlatIndex::kNone) return;
    if (capacity - room > kRetireAheadAbove) retire_ahead(task);
    for (uint32_t l = t; l != kNil; l = lines[l].next) {
      const uint32_t flags = lines[l].flags;
      for (uint32_t live = flags & kLiveBits; live != 0; live &= live - 1) {
        const uint32_t i = static_cast<uint32_t>(__builtin_ctz(live));
        if ((flags & (kOnTile << i)) != 0)  // (the call below would check it; this saves the call)
          unlink_from_tile(lines[l], i, /*release_empty_buffer=*/true);
        else
          unlink_from_buffer(4 * l + i, /*release_empty_buffer=*/true);
        ++room;
      }
    }
    release_task(t);
  }

  // Tasks retire in id order (the engine's window), each a chain of dependent loads:
  // the task's line, then its tiles. While the live entries outgrow the L1 cache,
  // retire(t) starts the loads of the next retires a step at a time, each from what the
  // step before brought in (so it waits for none): the line of t + 2, the tiles of t + 1's
  // first line. A hint only: tasks retired in another order just find less in the cache.
  // (Measured before lines: prefetching further ahead, or also a reader's list
  // neighbours, was slower.)
  static constexpr size_t kRetireAheadAbove = 2048;
  void retire_ahead(uint64_t task) {
    const uint32_t r2 = task_index.find_direct(task + 2);
    if (r2 != TaskIndex::kNone) prefetch_line(&lines[r2]);
    const uint32_t r1 = task_index.find_direct(task + 1);
    if (r1 != TaskIndex::kNone) {
      const TaskLine& line = lines[r1];
      for (uint32_t on = line.flags & (line.flags >> 16) & kLiveBits; on != 0; on &= on - 1)
        prefetch_line(&tiles[line.lane[__builtin_ctz(on)]]);
    }
  }

  void clear() {
    lines.clear();
    chains.clear();
    ranges.clear();
    set_index.clear();
    lanes.clear();
    grids.clear();
    grid_shapes.clear();
    tiles.clear();
    tile_next.clear();
    tile_index.clear();
    free_line = free_lane = recent_line = free_grid = free_tile = kNil;
    buffer_index.clear();
    task_index.clear();
    room = capacity;
  }
};

TensorMap::TensorMap(size_t capacity) : TensorMap(capacity, kDefaultIndexAbove) {}

TensorMap::TensorMap(size_t capacity, size_t index_above, bool tile_grids)
    : impl_(new Impl(capacity, index_above, tile_grids, &hint_)) {}

TensorMap::~TensorMap() { delete impl_; }

bool TensorMap::access(uint64_t task_id, const ChipTensor& view, AccessKind kind,
                       std::vector<uint64_t>& deps) {
  return impl_->access(task_id, view, kind, deps);
}

void TensorMap::prefetch_views(const ChipTensor* views, size_t n) const {
  impl_->prefetch_views(views, n);
}

void TensorMap::conflicts(const ChipTensor& view, AccessKind kind, std::vector<uint64_t>& deps) {
  impl_->conflicts(view, kind, deps);
}

void TensorMap::retire(uint64_t task_id) { impl_->retire(task_id); }

size_t TensorMap::live_entries() const { return impl_->capacity - impl_->room; }

size_t TensorMap::capacity() const { return impl_->capacity; }

void TensorMap::clear() { impl_->clear(); }

}  // namespace simpler::rt
