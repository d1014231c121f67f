#include "abi/code_arena.h"

#include <algorithm>
#include <string>

#include "abi/abi_error.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::rt::host {

void CodeArena::commit(size_t capacity) {
  block_ = DeviceAllocation::allocate(capacity, "the kernel-mode code arena");
  used_ = 0;
}

const uint8_t* CodeArena::upload(const void* bytes, size_t size) {
  const size_t start = (used_ + kAlignment - 1) / kAlignment * kAlignment;
  if (start > block_.size() || size > block_.size() - start) {
    fail(PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED,
         "the callable image (" + std::to_string(size) + " bytes) does not fit the code arena: " +
             std::to_string(block_.size() - std::min(start, block_.size())) + " of " +
             std::to_string(block_.size()) +
             " bytes free (set SIMPLER_KERNEL_CODE_ARENA_BYTES before init for a larger arena)");
  }
  uint8_t* dst = block_.data() + start;
  check_driver(sim_memcpy(dst, bytes, size, SIM_MEMCPY_HOST_TO_DEVICE),
               "uploading a callable image");
  used_ = start + size;
  return dst;
}

}  // namespace simpler::rt::host
