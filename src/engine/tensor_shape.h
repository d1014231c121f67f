// simpler runtime — non-throwing tensor checks and builders for the hot path (internal).
#pragma once

#include <cstdint>
#include <string>

#include "simpler/abi/chip_types.h"
#include "support/counted.h"

namespace simpler::rt {

using support::counted;

// Bytes of a contiguous tensor of this shape and dtype; false with `why` on a bad ndims,
// negative extent, unknown dtype or overflow.
bool shape_bytes(uint32_t ndims, const int64_t* shapes, uint32_t dtype, uint64_t* bytes,
                 std::string* why);

// shape_bytes would accept this OUT_ALLOC tensor's shape (no message built).
bool out_alloc_shape_ok(const ChipTensor& t);

// A valid view of DEVICE memory (validate_tensor's rules plus the address space).
bool check_device_tensor(const ChipTensor& t, std::string* why);

// The common case of check_device_tensor, inline and in one pass, for the submit path
// (where the out-of-line calls cost more than the arithmetic): true only when every check
// of check_device_tensor passes (same rules, same overflow arithmetic); false sends the
// caller to check_device_tensor, which names what is wrong. tests/engine checks the
// implication on random descriptors.
// Bytes per element of a dtype below CHIP_DT_COUNT (is_valid_data_type), inline.
inline int64_t quick_element_bytes(uint32_t dtype) {
  static constexpr int64_t kElementBytes[] = {4, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1, 8};
  static_assert(sizeof(kElementBytes) / sizeof(kElementBytes[0]) == CHIP_DT_COUNT,
                "one size per ChipDataType");
  return kElementBytes[dtype];
}

inline bool device_tensor_quick_ok(const ChipTensor& t) {
  if (t.space != CHIP_SPACE_DEVICE || t.ndims < 1 || t.ndims > CHIP_TENSOR_MAX_DIMS ||
      t.dtype >= CHIP_DT_COUNT || t.start_offset < 0) {
    return false;
  }
  uint64_t buffer_end = 0;
  if (__builtin_add_overflow(t.buffer.addr, t.buffer.size, &buffer_end)) return false;
  int64_t numel = 1;
  int64_t last = t.start_offset;  // element index of the last element touched
  for (uint32_t d = 0; d < t.ndims; ++d) {
    if (t.shapes[d] < 0 || t.strides[d] < 0) return false;
    if (__builtin_mul_overflow(numel, t.shapes[d], &numel)) return false;
  }
  if (numel == 0) return t.buffer.addr != 0 || t.buffer.size == 0;
  for (uint32_t d = 0; d < t.ndims; ++d) {
    int64_t step = 0;
    if (__builtin_mul_overflow(t.shapes[d] - 1, t.strides[d], &step)) return false;
    if (__builtin_add_overflow(last, step, &last)) return false;
  }
  const int64_t esize = quick_element_bytes(t.dtype);
  int64_t first_bytes = 0;
  int64_t end_bytes = 0;
  if (__builtin_mul_overflow(t.start_offset, esize, &first_bytes)) return false;
  if (__builtin_add_overflow(last, int64_t{1}, &last)) return false;
  if (__builtin_mul_overflow(last, esize, &end_bytes)) return false;
  if (t.buffer.addr == 0) return false;  // the view has elements (and t is not empty)
  return first_bytes == end_bytes || static_cast<uint64_t>(end_bytes) <= t.buffer.size;
}

// A contiguous row-major DEVICE tensor over [addr, addr + bytes).
ChipTensor contiguous_device_tensor(uint8_t* addr, uint64_t bytes, uint32_t ndims,
                                    const int64_t* shapes, uint32_t dtype);

// Byte offset from buffer.addr of the view's element at row-major linear `index`, or
// false with `why` when the index is outside the view.
bool element_byte_offset(const ChipTensor& t, int64_t index, uint64_t* offset, std::string* why);

}  // namespace simpler::rt
