#include "cluster_buffers.h"

#include <sys/mman.h>

#include "simpler/kernel/kernel_abi.h"

namespace simpler::rt {
namespace {

// As large as a buffer: an overrun by up to a whole buffer (a tile loop one trip too far)
// lands in the guard. Address space only; nothing is committed.
constexpr size_t kGuard = SIMPLER_CLUSTER_BUFFER_BYTES;
constexpr size_t kStride = SIMPLER_CLUSTER_BUFFER_BYTES + kGuard;

}  // namespace

std::unique_ptr<ClusterBuffers> ClusterBuffers::create(uint32_t clusters) {
  const size_t bytes = kGuard + static_cast<size_t>(clusters) * kStride;
  void* base = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  std::unique_ptr<ClusterBuffers> buffers(new ClusterBuffers(static_cast<uint8_t*>(base), bytes));
  for (uint32_t c = 0; c < clusters; ++c) {
    if (mprotect(buffers->at(c), SIMPLER_CLUSTER_BUFFER_BYTES, PROT_READ | PROT_WRITE) != 0)
      return nullptr;
  }
  return buffers;
}

ClusterBuffers::~ClusterBuffers() { munmap(base_, bytes_); }

uint8_t* ClusterBuffers::at(uint32_t cluster) const {
  return base_ + kGuard + static_cast<size_t>(cluster) * kStride;
}

}  // namespace simpler::rt
