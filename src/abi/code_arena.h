// simpler runtime host — kernel mode's code arena: device blocks that callable images are
// copied into back to back. The first block is committed at init; later blocks are added
// on demand up to a byte limit, so a context holds thousands of callables without
// committing their memory up front. Kernel mode never unloads a callable before
// finalize, so a bump allocator per block is exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "abi/driver.h"

namespace simpler::rt::host {

class CodeArena {
 public:
  static constexpr size_t kAlignment = 64;

  // Where the arena stood before an upload; rollback() returns to it.
  struct Mark {
    size_t blocks = 0;
    size_t used = 0;
  };

  // Commits the first block of min(first_block, limit) bytes; later blocks are at least
  // first_block bytes and the total never exceeds `limit`. Throws AbiError.
  void commit(size_t first_block, size_t limit);
  // Copies `size` bytes to the next aligned slot, adding a block when the current one is
  // full. Throws AbiError PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED when the limit would be
  // passed; nothing changes then.
  const uint8_t* upload(const void* bytes, size_t size);
  // Whether upload(size) fits the current block (no device allocation).
  bool fits(size_t size) const;
  // Forgets everything uploaded after `mark` and frees the blocks added since.
  void rollback(Mark mark);
  // SIMPLER_OK, or the first failed free's status (the blocks not freed are kept).
  int release();

  Mark mark() const { return {blocks_.size(), used_}; }
  size_t capacity() const;  // bytes committed in all blocks
  size_t limit() const { return limit_; }
  bool committed() const { return !blocks_.empty(); }

 private:
  std::vector<DeviceAllocation> blocks_;
  size_t used_ = 0;  // bytes used in the last block
  size_t block_bytes_ = 0;
  size_t limit_ = 0;
};

}  // namespace simpler::rt::host
