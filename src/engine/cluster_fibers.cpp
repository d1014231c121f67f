// One-cluster tasks as fibers of the starting thread.
#include "cluster_fibers.h"

#include <array>

#include "cluster_sync.h"
#include "fiber.h"

namespace simpler::rt {
namespace {

struct PartCall {
  const std::function<void(uint32_t)>* run_part;
  uint32_t part;
};

void run_part_call(void* arg) {
  auto* call = static_cast<PartCall*>(arg);
  (*call->run_part)(call->part);
}

}  // namespace

bool run_parts_cooperatively(uint32_t parts, ClusterSync& sync,
                             const std::function<void(uint32_t part)>& run_part) {
  // Per thread, kept: the stacks are mapped once (a cluster task per start would be an
  // mmap and munmap per part).
  thread_local std::array<Fiber, kClusterParts> fibers;
  std::array<PartCall, kClusterParts> calls{};
  if (parts > kClusterParts) return false;
  for (uint32_t i = 0; i < parts; ++i) {
    calls[i] = PartCall{&run_part, i};
    if (!fibers[i].prepare(&run_part_call, &calls[i])) return false;
  }
  uint32_t left = parts;
  while (left > 0) {
    bool resumed = false;
    for (uint32_t i = 0; i < parts; ++i) {
      // A round in which no part may go on cannot happen (a cluster where every part waits
      // is a deadlock, latched by the part that waited last); should it, every part looks
      // again rather than this loop spinning.
      if (fibers[i].finished() || !sync.may_resume(i)) continue;
      fibers[i].resume();
      resumed = true;
      if (fibers[i].finished()) --left;
    }
    if (!resumed) {
      for (uint32_t i = 0; i < parts; ++i) {
        if (fibers[i].finished()) continue;
        fibers[i].resume();
        if (fibers[i].finished()) --left;
      }
    }
  }
  return true;
}

}  // namespace simpler::rt
