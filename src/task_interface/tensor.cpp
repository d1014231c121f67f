// ChipTensor queries and validation: numel, contiguity, byte extent, validate.
#include <iterator>
#include <string>

#include "checked_math.h"
#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

using detail::checked_add;
using detail::checked_mul;

void check_ndims(const ChipTensor& t) {
  if (t.ndims < 1 || t.ndims > CHIP_TENSOR_MAX_DIMS) {
    throw TaskInterfaceError("ndims: " + std::to_string(t.ndims) + " is out of range (1.." +
                             std::to_string(CHIP_TENSOR_MAX_DIMS) + ")");
  }
}

// ndims, dtype, shapes and strides: everything the extent computation relies on.
void check_layout(const ChipTensor& t) {
  check_ndims(t);
  if (!is_valid_data_type(t.dtype)) {
    throw TaskInterfaceError("dtype: " + std::to_string(t.dtype) +
                             " is not a DataType (valid values are 0.." +
                             std::to_string(CHIP_DT_COUNT - 1) + ")");
  }
  for (uint32_t d = 0; d < t.ndims; ++d) {
    if (t.shapes[d] < 0) {
      throw TaskInterfaceError("shapes[" + std::to_string(d) + "]: " + std::to_string(t.shapes[d]) +
                               " is negative");
    }
    if (t.strides[d] < 0) {
      throw TaskInterfaceError("strides[" + std::to_string(d) +
                               "]: " + std::to_string(t.strides[d]) +
                               " is negative (negative strides are not supported)");
    }
  }
  if (t.start_offset < 0) {
    throw TaskInterfaceError("start_offset: " + std::to_string(t.start_offset) + " is negative");
  }
}

[[noreturn]] void throw_overflow(const char* what) {
  throw TaskInterfaceError(std::string("shapes/strides: the ") + what + " overflows 64 bits");
}

}  // namespace

int64_t tensor_numel(const ChipTensor& t) {
  check_ndims(t);
  int64_t n = 1;
  for (uint32_t d = 0; d < t.ndims; ++d) {
    if (t.shapes[d] < 0) {
      throw TaskInterfaceError("shapes[" + std::to_string(d) + "]: " + std::to_string(t.shapes[d]) +
                               " is negative");
    }
    auto next = checked_mul<int64_t>(n, t.shapes[d]);
    if (!next) throw_overflow("element count");
    n = *next;
  }
  return n;
}

bool tensor_is_contiguous(const ChipTensor& t) {
  if (tensor_numel(t) == 0) return true;
  int64_t expected = 1;
  for (uint32_t d = t.ndims; d-- > 0;) {
    // A dimension of extent 1 is never stepped over, so its stride is irrelevant.
    if (t.shapes[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shapes[d];  // cannot overflow: bounded by numel
  }
  return true;
}

std::pair<uint64_t, uint64_t> tensor_byte_extent(const ChipTensor& t) {
  check_layout(t);
  if (tensor_numel(t) == 0) return {0, 0};
  const auto esize = static_cast<int64_t>(element_size(static_cast<DataType>(t.dtype)));
  int64_t last = t.start_offset;  // element index of the last element touched
  for (uint32_t d = 0; d < t.ndims; ++d) {
    auto step = checked_mul<int64_t>(t.shapes[d] - 1, t.strides[d]);
    if (!step) throw_overflow("byte extent");
    auto sum = checked_add<int64_t>(last, *step);
    if (!sum) throw_overflow("byte extent");
    last = *sum;
  }
  auto first_bytes = checked_mul<int64_t>(t.start_offset, esize);
  auto end_elems = checked_add<int64_t>(last, 1);
  if (!first_bytes || !end_elems) throw_overflow("byte extent");
  auto end_bytes = checked_mul<int64_t>(*end_elems, esize);
  if (!end_bytes) throw_overflow("byte extent");
  return {static_cast<uint64_t>(*first_bytes), static_cast<uint64_t>(*end_bytes)};
}

namespace {

// The common case of validate_tensor in one pass with no exception machinery: true only
// when every check of validate_tensor_slowly passes (same arithmetic, same overflow rules),
// so a tensor it accepts is one the slow path accepts too. Anything else takes the slow
// path, which names the first failed check. It runs per tensor on the submit and launch
// paths, where the slow path's repeated walks cost more than the work they guard.
bool validate_tensor_quickly(const ChipTensor& t) noexcept {
  if (t.ndims < 1 || t.ndims > CHIP_TENSOR_MAX_DIMS || !is_valid_data_type(t.dtype)) return false;
  if (t.space != CHIP_SPACE_HOST && t.space != CHIP_SPACE_DEVICE) return false;
  if (t.start_offset < 0) return false;
  uint64_t buffer_end = 0;
  if (__builtin_add_overflow(t.buffer.addr, t.buffer.size, &buffer_end)) return false;
  int64_t numel = 1;
  for (uint32_t d = 0; d < t.ndims; ++d) {
    if (t.shapes[d] < 0 || t.strides[d] < 0) return false;
    if (__builtin_mul_overflow(numel, t.shapes[d], &numel)) return false;
  }
  if (numel == 0) return true;  // an empty view touches no memory
  int64_t last = t.start_offset;
  for (uint32_t d = 0; d < t.ndims; ++d) {
    int64_t step = 0;
    if (__builtin_mul_overflow(t.shapes[d] - 1, t.strides[d], &step)) return false;
    if (__builtin_add_overflow(last, step, &last)) return false;
  }
  // Element sizes by ChipDataType value (data_type.cpp's table; is_valid_data_type held).
  static constexpr int64_t kElementBytes[] = {4, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1, 8};
  static_assert(std::size(kElementBytes) == CHIP_DT_COUNT, "one size per ChipDataType");
  const int64_t esize = kElementBytes[t.dtype];
  int64_t first_bytes = 0;
  int64_t end_elems = 0;
  int64_t end_bytes = 0;
  if (__builtin_mul_overflow(t.start_offset, esize, &first_bytes)) return false;
  if (__builtin_add_overflow(last, int64_t{1}, &end_elems)) return false;
  if (__builtin_mul_overflow(end_elems, esize, &end_bytes)) return false;
  if (first_bytes == end_bytes) return true;
  return t.buffer.addr != 0 && static_cast<uint64_t>(end_bytes) <= t.buffer.size;
}

// The reference checks, in order; each failure throws with the message naming the field.
void validate_tensor_slowly(const ChipTensor& t) {
  check_layout(t);
  if (t.space != CHIP_SPACE_HOST && t.space != CHIP_SPACE_DEVICE) {
    throw TaskInterfaceError("space: " + std::to_string(t.space) +
                             " is not an AddressSpace (HOST=0, DEVICE=1)");
  }
  if (!checked_add<uint64_t>(t.buffer.addr, t.buffer.size)) {
    throw TaskInterfaceError("buffer: addr + size wraps around the address space");
  }
  const auto [first, last] = tensor_byte_extent(t);
  if (first == last) return;  // an empty view touches no memory
  if (t.buffer.addr == 0) {
    throw TaskInterfaceError("buffer.addr: null, but the view has elements");
  }
  if (last > t.buffer.size) {
    throw TaskInterfaceError("buffer.size: the view reaches byte " + std::to_string(last) +
                             " but the buffer has only " + std::to_string(t.buffer.size) +
                             " bytes (check shapes, strides and start_offset)");
  }
}

}  // namespace

void validate_tensor(const ChipTensor& t) {
  if (validate_tensor_quickly(t)) return;
  validate_tensor_slowly(t);
}

}  // namespace simpler
