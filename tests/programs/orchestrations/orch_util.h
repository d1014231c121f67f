// Helpers for the test orchestrations (header-only: orchestrations link against nothing).
#pragma once

#include <stdint.h>

#include "simpler/orch/orchestration_api.h"

namespace test_orch {

inline ChipTensor element_view(const ChipTensor& t, int64_t index) {
  ChipTensor v = t;
  v.ndims = 1;
  v.start_offset = t.start_offset + index * t.strides[t.ndims - 1];
  v.shapes[0] = 1;
  v.strides[0] = 1;
  return v;
}

// rows x cols tile of a 2-D tensor starting at (row, col).
inline ChipTensor tile_view(const ChipTensor& t, int64_t row, int64_t col, int64_t rows,
                            int64_t cols) {
  ChipTensor v = t;
  v.start_offset = t.start_offset + row * t.strides[0] + col * t.strides[1];
  v.shapes[0] = rows;
  v.shapes[1] = cols;
  return v;
}

inline uint64_t f32_bits(float v) {
  uint32_t b;
  __builtin_memcpy(&b, &v, sizeof b);
  return b;
}

}  // namespace test_orch

#define TEST_ORCH_TRY(expr)   \
  do {                        \
    const int rc_ = (expr);   \
    if (rc_ != 0) return rc_; \
  } while (0)
