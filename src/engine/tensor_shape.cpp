// Non-throwing tensor checks for the orchestrator.
#include "tensor_shape.h"

#include <exception>

#include "simpler/task/task_interface.h"

namespace simpler::rt {

bool shape_bytes(uint32_t ndims, const int64_t* shapes, uint32_t dtype, uint64_t* bytes,
                 std::string* why) {
  if (ndims < 1 || ndims > CHIP_TENSOR_MAX_DIMS) {
    *why = "ndims " + std::to_string(ndims) + " is out of range (1.." +
           std::to_string(CHIP_TENSOR_MAX_DIMS) + ")";
    return false;
  }
  if (!is_valid_data_type(dtype)) {
    *why = "dtype " + std::to_string(dtype) + " is not a DataType";
    return false;
  }
  uint64_t n = element_size(static_cast<DataType>(dtype));
  for (uint32_t d = 0; d < ndims; ++d) {
    if (shapes[d] < 0) {
      *why = "shapes[" + std::to_string(d) + "] = " + std::to_string(shapes[d]) + " is negative";
      return false;
    }
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(shapes[d]), &n)) {
      *why = "the byte size overflows 64 bits";
      return false;
    }
  }
  *bytes = n;
  return true;
}

bool out_alloc_shape_ok(const ChipTensor& t) {
  std::string why;  // built only on failure
  uint64_t bytes = 0;
  return shape_bytes(t.ndims, t.shapes, t.dtype, &bytes, &why);
}

bool check_device_tensor(const ChipTensor& t, std::string* why) {
  try {
    validate_tensor(t);
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
  if (t.space != CHIP_SPACE_DEVICE) {
    *why =
        "the tensor is in HOST space; tasks take DEVICE tensors (entry tensors are staged "
        "by the runtime, intermediates come from OUT_ALLOC or alloc_tensor)";
    return false;
  }
  if (t.buffer.addr == 0 && t.buffer.size != 0) {
    *why = "buffer.addr is null";
    return false;
  }
  return true;
}

ChipTensor contiguous_device_tensor(uint8_t* addr, uint64_t bytes, uint32_t ndims,
                                    const int64_t* shapes, uint32_t dtype) {
  ChipTensor t{};
  t.buffer.addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(addr));
  t.buffer.size = bytes;
  t.ndims = ndims;
  t.dtype = dtype;
  t.space = CHIP_SPACE_DEVICE;
  int64_t stride = 1;
  for (uint32_t d = ndims; d-- > 0;) {
    t.shapes[d] = shapes[d];
    t.strides[d] = stride;
    stride *= shapes[d];
  }
  return t;
}

bool element_byte_offset(const ChipTensor& t, int64_t index, uint64_t* offset, std::string* why) {
  int64_t numel = 1;
  for (uint32_t d = 0; d < t.ndims; ++d) numel *= t.shapes[d];
  if (index < 0 || index >= numel) {
    *why = "index " + std::to_string(index) + " is outside the view's " + std::to_string(numel) +
           " elements";
    return false;
  }
  int64_t element = t.start_offset;
  int64_t rest = index;
  for (uint32_t d = t.ndims; d-- > 0;) {
    element += (rest % t.shapes[d]) * t.strides[d];
    rest /= t.shapes[d];
  }
  *offset = static_cast<uint64_t>(element) * element_size(static_cast<DataType>(t.dtype));
  return true;
}

}  // namespace simpler::rt
