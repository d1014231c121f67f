// simpler runtime — non-throwing tensor checks and builders for the hot path (internal).
#pragma once

#include <cstdint>
#include <string>

#include "simpler/abi/chip_types.h"

namespace simpler::rt {

// "1 tensor", "2 tensors": counts in messages read as the user would write them.
inline std::string counted(uint64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// Bytes of a contiguous tensor of this shape and dtype; false with `why` on a bad ndims,
// negative extent, unknown dtype or overflow.
bool shape_bytes(uint32_t ndims, const int64_t* shapes, uint32_t dtype, uint64_t* bytes,
                 std::string* why);

// A valid view of DEVICE memory (validate_tensor's rules plus the address space).
bool check_device_tensor(const ChipTensor& t, std::string* why);

// A contiguous row-major DEVICE tensor over [addr, addr + bytes).
ChipTensor contiguous_device_tensor(uint8_t* addr, uint64_t bytes, uint32_t ndims,
                                    const int64_t* shapes, uint32_t dtype);

// Byte offset from buffer.addr of the view's element at row-major linear `index`, or
// false with `why` when the index is outside the view.
bool element_byte_offset(const ChipTensor& t, int64_t index, uint64_t* offset, std::string* why);

}  // namespace simpler::rt
