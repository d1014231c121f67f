// ChipTensor construction and zero-copy views (make, slice, reshape, transpose).
#include <string>

#include "checked_math.h"
#include "simpler/task/task_interface.h"
#include "support/counted.h"

namespace simpler {
namespace {

using detail::checked_add;
using detail::checked_mul;

std::string dims_range() { return "1.." + std::to_string(CHIP_TENSOR_MAX_DIMS); }

// Sets ndims/shapes and contiguous row-major strides. Strides treat an extent-0 dim as 1
// (like numpy) so every stride stays positive.
void set_row_major(ChipTensor& t, std::span<const int64_t> shape, const char* what) {
  if (shape.empty() || shape.size() > CHIP_TENSOR_MAX_DIMS) {
    throw TaskInterfaceError(std::string(what) + ": " + std::to_string(shape.size()) +
                             " dims is out of range (" + dims_range() + ")");
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      throw TaskInterfaceError(std::string(what) + "[" + std::to_string(d) +
                               "]: " + std::to_string(shape[d]) + " is negative");
    }
  }
  t.ndims = static_cast<uint32_t>(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    t.shapes[d] = shape[d];
    t.strides[d] = stride;
    auto next = checked_mul<int64_t>(stride, shape[d] > 0 ? shape[d] : 1);
    if (!next) {
      throw TaskInterfaceError(std::string(what) + ": the element count overflows 64 bits");
    }
    stride = *next;
  }
  for (size_t d = shape.size(); d < CHIP_TENSOR_MAX_DIMS; ++d) {
    t.shapes[d] = 0;
    t.strides[d] = 0;
  }
}

void check_dim(const ChipTensor& t, uint32_t dim, const char* op, const char* name) {
  if (dim >= t.ndims) {
    throw TaskInterfaceError(std::string(op) + ": " + name + " " + std::to_string(dim) +
                             " is out of range for a " + std::to_string(t.ndims) + "-d tensor");
  }
}

}  // namespace

ChipTensor make_tensor(uint64_t addr, std::span<const int64_t> shape, DataType dtype,
                       AddressSpace space, uint64_t buffer_bytes) {
  ChipTensor t{};
  const uint64_t esize = element_size(dtype);  // throws on an invalid dtype
  set_row_major(t, shape, "shape");
  t.dtype = static_cast<uint32_t>(dtype);
  t.space = static_cast<uint32_t>(space);
  t.buffer.addr = addr;
  const auto nbytes = checked_mul<uint64_t>(static_cast<uint64_t>(tensor_numel(t)), esize);
  if (!nbytes) throw TaskInterfaceError("shape: the byte size overflows 64 bits");
  if (buffer_bytes != 0 && buffer_bytes < *nbytes) {
    throw TaskInterfaceError("buffer_bytes: " + std::to_string(buffer_bytes) +
                             " is smaller than the tensor (" + support::counted(*nbytes, "byte") +
                             ")");
  }
  t.buffer.size = buffer_bytes != 0 ? buffer_bytes : *nbytes;
  validate_tensor(t);
  return t;
}

ChipTensor tensor_slice(const ChipTensor& t, uint32_t dim, int64_t start, int64_t stop) {
  validate_tensor(t);
  check_dim(t, dim, "slice", "dim");
  if (start < 0 || stop < start || stop > t.shapes[dim]) {
    throw TaskInterfaceError("slice: [" + std::to_string(start) + ", " + std::to_string(stop) +
                             ") is not a range within 0.." + std::to_string(t.shapes[dim]) +
                             " of dim " + std::to_string(dim));
  }
  ChipTensor out = t;
  // Bounded by the validated extent of `t`, so this cannot overflow; checked anyway.
  auto offset = checked_add<int64_t>(t.start_offset, start * t.strides[dim]);
  if (!offset) throw TaskInterfaceError("slice: start_offset overflows 64 bits");
  out.start_offset = *offset;
  out.shapes[dim] = stop - start;
  validate_tensor(out);
  return out;
}

ChipTensor tensor_reshape(const ChipTensor& t, std::span<const int64_t> shape) {
  validate_tensor(t);
  if (!tensor_is_contiguous(t)) {
    throw TaskInterfaceError(
        "reshape: the tensor is not contiguous; only a contiguous tensor can be reshaped "
        "without a copy");
  }
  ChipTensor out = t;
  set_row_major(out, shape, "reshape shape");
  const int64_t want = tensor_numel(out);
  const int64_t have = tensor_numel(t);
  if (want != have) {
    throw TaskInterfaceError("reshape shape: " + std::to_string(want) +
                             " elements, but the tensor has " + std::to_string(have));
  }
  validate_tensor(out);
  return out;
}

ChipTensor tensor_transpose(const ChipTensor& t, uint32_t dim0, uint32_t dim1) {
  validate_tensor(t);
  check_dim(t, dim0, "transpose", "dim0");
  check_dim(t, dim1, "transpose", "dim1");
  ChipTensor out = t;
  std::swap(out.shapes[dim0], out.shapes[dim1]);
  std::swap(out.strides[dim0], out.strides[dim1]);
  return out;
}

}  // namespace simpler
