#include "serial_floor.h"

#include <chrono>

#include "simpler/abi/chip_types.h"

#include "pattern_tasks.h"

namespace simpler::bench {
namespace {

// The empty kernel, called through a pointer the compiler cannot see through.
__attribute__((noinline)) void empty_kernel(const int64_t* argv) {
  asm volatile("" : : "r"(argv) : "memory");
}
void (*volatile g_kernel)(const int64_t*) = empty_kernel;

rt::AccessKind kind_of(SlotMode mode) {
  switch (mode) {
    case SlotMode::In:
      return rt::AccessKind::Read;
    case SlotMode::Out:
      return rt::AccessKind::Write;
    default:
      return rt::AccessKind::ReadWrite;
  }
}

}  // namespace

SerialFloor::SerialFloor(uint64_t window)
    : window_(window), map_(4 * window * (BENCH_MAX_DEPS + 1)) {
  deps_.reserve(64);
}

double SerialFloor::run(int pattern, uint64_t tasks, bool views, uint32_t k) {
  const uint64_t needed = bench_pattern_slots(pattern, tasks);
  if (needed > slot_count_) {
    slots_ = std::make_unique<float[]>(needed);
    slot_count_ = needed;
  }
  ChipTensor buffer{};
  buffer.buffer.addr = reinterpret_cast<uint64_t>(slots_.get());
  buffer.buffer.size = slot_count_ * sizeof(float);
  buffer.dtype = CHIP_DT_FLOAT32;
  buffer.ndims = 1;
  buffer.shapes[0] = static_cast<int64_t>(slot_count_);
  buffer.strides[0] = 1;
  const uint64_t first = next_id_;
  const auto start = std::chrono::steady_clock::now();
  for_each_pattern_task(pattern, tasks, k, [&](const PatternTask& t) {
    const uint64_t id = next_id_++;
    int64_t argv[BENCH_MAX_DEPS + 1];
    ChipTensor views_of_task[BENCH_MAX_DEPS + 1];
    deps_.clear();
    for (uint32_t i = 0; i < t.count; ++i) {
      views_of_task[i] = slot_tensor(buffer, t.access[i].slot, views);
      map_.access(id, views_of_task[i], kind_of(t.access[i].mode), deps_);
      argv[i] = reinterpret_cast<int64_t>(&views_of_task[i]);
    }
    g_kernel(argv);  // every producer already ran: inline, in submission order
    if (id >= first + window_) map_.retire(id - window_);
    return 0;
  });
  // The tasks still in the window at the end (the engine retires them when its run ends).
  const uint64_t oldest_live = next_id_ - first > window_ ? next_id_ - window_ : first;
  for (uint64_t id = oldest_live; id < next_id_; ++id) map_.retire(id);
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(stop - start).count();
}

}  // namespace simpler::bench
