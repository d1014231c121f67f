#include "abi/code_arena.h"

#include <algorithm>
#include <string>

#include "abi/abi_error.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"
#include "support/counted.h"

namespace simpler::rt::host {

void CodeArena::commit(size_t first_block, size_t limit) {
  limit_ = limit;
  block_bytes_ = std::min(first_block, limit);
  blocks_.clear();
  blocks_.push_back(DeviceAllocation::allocate(block_bytes_, "the kernel-mode code arena"));
  used_ = 0;
}

size_t CodeArena::capacity() const {
  size_t total = 0;
  for (const auto& block : blocks_) total += block.size();
  return total;
}

bool CodeArena::fits(size_t size) const {
  if (blocks_.empty()) return false;
  const size_t start = (used_ + kAlignment - 1) / kAlignment * kAlignment;
  return start <= blocks_.back().size() && size <= blocks_.back().size() - start;
}

const uint8_t* CodeArena::upload(const void* bytes, size_t size) {
  if (blocks_.empty()) fail(PTO_RUNTIME_ERR_INVALID_STATE, "the code arena is not committed");
  size_t start = (used_ + kAlignment - 1) / kAlignment * kAlignment;
  if (!fits(size)) {
    // A new block: at least the usual block size, larger for a larger image.
    const size_t block = std::max(block_bytes_, size);
    const size_t committed = capacity();
    if (committed > limit_ || block > limit_ - committed) {
      fail(PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED,
           "the callable image (" + support::counted(size, "byte") + ") does not fit the code " +
               "arena: " + std::to_string(committed) + " of its " + std::to_string(limit_) +
               " bytes are committed and the current block is full (set " +
               "SIMPLER_KERNEL_CODE_ARENA_BYTES before init for a larger limit)");
    }
    blocks_.push_back(DeviceAllocation::allocate(block, "a kernel-mode code arena block"));
    start = 0;
  }
  uint8_t* dst = blocks_.back().data() + start;
  check_driver(sim_memcpy(dst, bytes, size, SIM_MEMCPY_HOST_TO_DEVICE),
               "uploading a callable image");
  used_ = start + size;
  return dst;
}

void CodeArena::rollback(Mark mark) {
  while (blocks_.size() > mark.blocks && blocks_.size() > 1) {
    if (blocks_.back().release() != SIMPLER_OK) break;  // kept; freed at release()
    blocks_.pop_back();
  }
  if (blocks_.size() == mark.blocks) used_ = mark.used;
}

int CodeArena::release() {
  while (!blocks_.empty()) {
    const int status = blocks_.back().release();
    if (status != SIMPLER_OK) return status;
    blocks_.pop_back();
  }
  used_ = 0;
  return SIMPLER_OK;
}

}  // namespace simpler::rt::host
