// simpler runtime host — kernel mode's code arena: one device block committed at init,
// callable images are copied into it back to back (kernel mode never unloads a callable
// before finalize, so a bump allocator is exact).
#pragma once

#include <cstddef>
#include <cstdint>

#include "abi/driver.h"

namespace simpler::rt::host {

class CodeArena {
 public:
  static constexpr size_t kAlignment = 64;

  void commit(size_t capacity);  // throws AbiError
  // Copies `size` bytes to the next aligned slot. Throws AbiError
  // PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED when they do not fit; nothing changes then.
  const uint8_t* upload(const void* bytes, size_t size);
  // Forgets everything uploaded after `mark` (a used() value).
  void rollback(size_t mark) { used_ = mark; }
  int release() { return block_.release(); }

  size_t used() const { return used_; }
  size_t capacity() const { return block_.size(); }
  bool committed() const { return !block_.empty(); }

 private:
  DeviceAllocation block_;
  size_t used_ = 0;
};

}  // namespace simpler::rt::host
