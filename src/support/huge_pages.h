// Asks the kernel for 2 MiB pages under a large buffer. An anonymous or NORESERVE mapping
// gets 4 KiB pages even with transparent huge pages on, and wherever the kernel pins such
// memory (process_vm_readv, Open MPI's single-copy transport) it walks it page by page: a
// 64 MiB copy between two ranks took ~3x as long as between two malloc'd buffers.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace simpler::support {

// Buffers this large ask for huge pages (smaller ones would only split them).
inline constexpr std::size_t kHugePageHintBytes = std::size_t{4} << 20;

// Over the whole 2 MiB pages inside [begin, begin + size) only (THP needs them aligned;
// small neighbours keep 4 KiB pages). A hint: a failure changes nothing.
inline void advise_huge_pages(void* begin, std::size_t size) {
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  const auto start = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = (start + kHugePage - 1) / kHugePage * kHugePage;
  const std::uintptr_t last = (start + size) / kHugePage * kHugePage;
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

}  // namespace simpler::support
