#include "common/tensor_map.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "common/overlap.h"
#include "common/tensor_map_index.h"

namespace simpler::rt {
namespace {

constexpr uint32_t kNil = UINT32_MAX;
constexpr size_t kMaxCapacity = UINT32_MAX - 1;  // entry numbers are 32-bit, kNil excluded
constexpr size_t kInitialReserve = 1024;

}  // namespace

// One recorded access. An entry sits on two intrusive doubly linked lists: its buffer's
// (scanned by access) and its task's (walked by retire). The fields the scan reads come
// first; the box form used by the exact test lives in the parallel `geometry` array.
struct TensorMapEntry {
  int64_t lo;  // touched bytes lie in [lo, hi)
  int64_t hi;
  uint64_t task;
  uint32_t buf_next;
  uint32_t buf_prev;
  uint32_t task_next;
  uint32_t task_prev;
  uint32_t buffer;    // BufferRecord number
  uint32_t task_rec;  // TaskRecord number
  bool write;         // Write or ReadWrite
  bool dense;
};

struct TensorMap::Impl {
  struct BufferRecord {
    uint64_t addr;
    uint32_t head;  // entry list; also the free-list link of a free record
  };
  struct TaskRecord {
    uint64_t task;
    uint32_t head;
  };

  explicit Impl(size_t cap) : capacity(cap) {
    if (cap > kMaxCapacity)
      throw std::invalid_argument("TensorMap capacity " + std::to_string(cap) +
                                  " exceeds the maximum of " + std::to_string(kMaxCapacity) +
                                  " entries; use a smaller tensormap_capacity");
    const size_t reserve = cap < kInitialReserve ? cap : kInitialReserve;
    entries.reserve(reserve);
    geometry.reserve(reserve);
    covered.reserve(64);
  }

  size_t capacity;
  size_t live = 0;

  std::vector<TensorMapEntry> entries;
  std::vector<ViewGeometry> geometry;  // parallel to entries
  uint32_t free_entry = kNil;          // linked through buf_next

  std::vector<BufferRecord> buffers;
  uint32_t free_buffer = kNil;
  FlatIndex buffer_index;  // addr -> BufferRecord

  std::vector<TaskRecord> tasks;
  uint32_t free_task = kNil;
  FlatIndex task_index;  // task id -> TaskRecord

  std::vector<uint32_t> covered;  // scratch of access(): entries the new write hides

  template <typename Pool>
  static uint32_t take(Pool& pool, uint32_t& free_head) {
    if (free_head != kNil) {
      const uint32_t n = free_head;
      free_head = pool[n].head;
      return n;
    }
    pool.emplace_back();
    return static_cast<uint32_t>(pool.size() - 1);
  }

  uint32_t buffer_record(uint64_t addr) {
    uint32_t rec = buffer_index.find(addr);
    if (rec == FlatIndex::kNone) {
      rec = take(buffers, free_buffer);
      buffers[rec] = BufferRecord{addr, kNil};
      buffer_index.insert(addr, rec);
    }
    return rec;
  }

  uint32_t task_record(uint64_t task) {
    uint32_t rec = task_index.find(task);
    if (rec == FlatIndex::kNone) {
      rec = take(tasks, free_task);
      tasks[rec] = TaskRecord{task, kNil};
      task_index.insert(task, rec);
    }
    return rec;
  }

  uint32_t take_entry() {
    if (free_entry != kNil) {
      const uint32_t n = free_entry;
      free_entry = entries[n].buf_next;
      return n;
    }
    entries.emplace_back();
    geometry.emplace_back();
    return static_cast<uint32_t>(entries.size() - 1);
  }

  void insert(uint64_t task, uint64_t addr, const ViewGeometry& g, bool write) {
    const uint32_t b = buffer_record(addr);
    const uint32_t t = task_record(task);
    const uint32_t n = take_entry();
    TensorMapEntry& e = entries[n];
    e = TensorMapEntry{g.lo, g.hi, task, buffers[b].head, kNil, tasks[t].head, kNil, b, t,
                       write, g.dense};
    if (e.buf_next != kNil) entries[e.buf_next].buf_prev = n;
    buffers[b].head = n;
    if (e.task_next != kNil) entries[e.task_next].task_prev = n;
    tasks[t].head = n;
    geometry[n] = g;
    ++live;
  }

  void unlink_from_buffer(uint32_t n, bool release_empty_buffer) {
    const TensorMapEntry& e = entries[n];
    if (e.buf_prev != kNil) entries[e.buf_prev].buf_next = e.buf_next;
    else buffers[e.buffer].head = e.buf_next;
    if (e.buf_next != kNil) entries[e.buf_next].buf_prev = e.buf_prev;
    BufferRecord& b = buffers[e.buffer];
    if (release_empty_buffer && b.head == kNil) {
      buffer_index.erase(b.addr);
      b.head = free_buffer;
      free_buffer = e.buffer;
    }
  }

  void unlink_from_task(uint32_t n) {
    const TensorMapEntry& e = entries[n];
    if (e.task_prev != kNil) entries[e.task_prev].task_next = e.task_next;
    else tasks[e.task_rec].head = e.task_next;
    if (e.task_next != kNil) entries[e.task_next].task_prev = e.task_prev;
    TaskRecord& t = tasks[e.task_rec];
    if (t.head == kNil) {
      task_index.erase(t.task);
      t.head = free_task;
      free_task = e.task_rec;
    }
  }

  void free_entry_slot(uint32_t n) {
    entries[n].buf_next = free_entry;
    free_entry = n;
    --live;
  }

  bool access(uint64_t task, const ChipTensor& view, AccessKind kind,
              std::vector<uint64_t>& deps) {
    const ViewGeometry g = describe_view(view);
    if (g.empty) return true;  // touches no byte: orders nothing
    const bool write = kind != AccessKind::Read;
    const size_t deps_before = deps.size();
    covered.clear();

    const uint32_t b = buffer_index.find(view.buffer.addr);
    if (b != FlatIndex::kNone) {
      for (uint32_t n = buffers[b].head; n != kNil; n = entries[n].buf_next) {
        const TensorMapEntry& e = entries[n];
        if (!(write || e.write)) continue;               // read after read
        if (!(e.lo < g.hi && g.lo < e.hi)) continue;     // byte ranges apart
        Relation r;
        if (e.dense && g.dense) r = {true, g.lo <= e.lo && e.hi <= g.hi};
        else r = relate(g, geometry[n]);
        if (!r.overlap) continue;
        if (e.task != task && (deps.size() == deps_before || deps.back() != e.task))
          deps.push_back(e.task);
        // A covered entry is hidden for good: whoever overlaps it later overlaps this
        // write and so waits for it, and this write waits for the entry.
        if (write && r.covers) covered.push_back(n);
      }
    }
    if (live - covered.size() + 1 > capacity) {
      deps.resize(deps_before);
      return false;
    }
    // Insert before dropping: if an allocation throws, nothing has been dropped yet.
    insert(task, view.buffer.addr, g, write);
    for (uint32_t n : covered) {
      unlink_from_buffer(n, /*release_empty_buffer=*/false);  // the new entry is there
      unlink_from_task(n);
      free_entry_slot(n);
    }
    return true;
  }

  void retire(uint64_t task) {
    const uint32_t t = task_index.find(task);
    if (t == FlatIndex::kNone) return;
    uint32_t n = tasks[t].head;
    while (n != kNil) {
      const uint32_t next = entries[n].task_next;
      unlink_from_buffer(n, /*release_empty_buffer=*/true);
      free_entry_slot(n);
      n = next;
    }
    task_index.erase(task);
    tasks[t].head = free_task;
    free_task = t;
  }

  void clear() {
    entries.clear();
    geometry.clear();
    buffers.clear();
    tasks.clear();
    free_entry = free_buffer = free_task = kNil;
    buffer_index.clear();
    task_index.clear();
    live = 0;
  }
};

TensorMap::TensorMap(size_t capacity) : impl_(new Impl(capacity)) {}

TensorMap::~TensorMap() { delete impl_; }

bool TensorMap::access(uint64_t task_id, const ChipTensor& view, AccessKind kind,
                       std::vector<uint64_t>& deps) {
  return impl_->access(task_id, view, kind, deps);
}

void TensorMap::retire(uint64_t task_id) { impl_->retire(task_id); }

size_t TensorMap::live_entries() const { return impl_->live; }

size_t TensorMap::capacity() const { return impl_->capacity; }

void TensorMap::clear() { impl_->clear(); }

}  // namespace simpler::rt
