// Builders for ChipTensor views used by the tensor-map tests and benchmark.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "simpler/abi/chip_types.h"

namespace simpler::rt::testing {

// A view of `addr` with explicit start (elements), shapes and strides (elements).
inline ChipTensor make_view(uint64_t addr, uint64_t size_bytes, int64_t start,
                            std::initializer_list<int64_t> shapes,
                            std::initializer_list<int64_t> strides,
                            uint32_t dtype = CHIP_DT_FLOAT32) {
  ChipTensor t{};
  t.buffer = ChipBuffer{addr, size_bytes};
  t.start_offset = start;
  t.dtype = dtype;
  t.space = CHIP_SPACE_DEVICE;
  t.ndims = static_cast<uint32_t>(shapes.size());
  uint32_t k = 0;
  for (int64_t s : shapes) t.shapes[k++] = s;
  k = 0;
  for (int64_t s : strides) t.strides[k++] = s;
  return t;
}

// Contiguous elements [begin, end) of a 1-D float32 buffer.
inline ChipTensor slice1d(uint64_t addr, int64_t begin, int64_t end,
                          uint32_t dtype = CHIP_DT_FLOAT32) {
  return make_view(addr, 1u << 20, begin, {end - begin}, {1}, dtype);
}

// Rows [r0, r0+nr) x cols [c0, c0+nc) of a row-major float32 matrix with `cols` columns.
inline ChipTensor tile(uint64_t addr, int64_t cols, int64_t r0, int64_t c0, int64_t nr,
                       int64_t nc) {
  return make_view(addr, 1u << 20, r0 * cols + c0, {nr, nc}, {cols, 1});
}

// The same elements as tile(...), described as its transpose (shape nc x nr).
inline ChipTensor tile_transposed(uint64_t addr, int64_t cols, int64_t r0, int64_t c0, int64_t nr,
                                  int64_t nc) {
  return make_view(addr, 1u << 20, r0 * cols + c0, {nc, nr}, {1, cols});
}

}  // namespace simpler::rt::testing
