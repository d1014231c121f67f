// Host buffers for HOST tensors (program mode).
#include "simpler/worker/host_buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace simpler {

void HostBuffer::AlignedFree::operator()(std::byte* p) const noexcept { std::free(p); }

static std::byte* allocate_zeroed(size_t nbytes) {
  if (nbytes == 0) throw std::invalid_argument("Worker.create_buffer: nbytes must be > 0");
  constexpr size_t kAlign = 64;
  const size_t rounded = (nbytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return static_cast<std::byte*>(p);
}

HostBuffer::HostBuffer(size_t nbytes) : storage_(allocate_zeroed(nbytes)), nbytes_(nbytes) {}

bool HostBuffer::overlaps(uint64_t addr, uint64_t size) const noexcept {
  const uint64_t begin = address();
  const uint64_t end = begin + nbytes_;
  return size > 0 && addr < end && begin < addr + size;
}

}  // namespace simpler
