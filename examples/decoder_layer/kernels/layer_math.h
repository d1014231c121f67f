// Element access for the decoder-layer kernels: tensors are stored as float32, bfloat16 or
// float16 and every kernel computes in float32, so one kernel source serves all three.
#pragma once

#include <cmath>
#include <cstring>

#include "simpler/kernel/kernel_abi.h"

namespace layer {

inline float bf16_to_f32(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even, as numpy-side golden code and accelerators do.
inline uint16_t f32_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline bool supported(uint32_t dtype) {
  return dtype == CHIP_DT_FLOAT32 || dtype == CHIP_DT_BFLOAT16 || dtype == CHIP_DT_FLOAT16;
}

// A 2-D strided view; a 1-D tensor is one row.
struct Matrix {
  char* base = nullptr;
  uint32_t dtype = CHIP_DT_FLOAT32;
  int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;

  size_t elem_size() const { return dtype == CHIP_DT_FLOAT32 ? 4 : 2; }
  char* at(int64_t r, int64_t c) const {
    return base + (r * row_stride + c * col_stride) * static_cast<int64_t>(elem_size());
  }
  float get(int64_t r, int64_t c) const {
    const char* p = at(r, c);
    if (dtype == CHIP_DT_FLOAT32) {
      float f;
      std::memcpy(&f, p, sizeof f);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    if (dtype == CHIP_DT_BFLOAT16) return bf16_to_f32(h);
    _Float16 half;
    std::memcpy(&half, &h, sizeof h);
    return static_cast<float>(half);
  }
  void set(int64_t r, int64_t c, float v) const {
    char* p = at(r, c);
    if (dtype == CHIP_DT_FLOAT32) {
      std::memcpy(p, &v, sizeof v);
    } else if (dtype == CHIP_DT_BFLOAT16) {
      const uint16_t h = f32_to_bf16(v);
      std::memcpy(p, &h, sizeof h);
    } else {
      const _Float16 half = static_cast<_Float16>(v);
      std::memcpy(p, &half, sizeof half);
    }
  }
};

// Returns false (and the kernel fails the run) for a tensor the layer cannot handle.
inline bool matrix(const ChipTensor* t, Matrix* m) {
  if (t == nullptr || !supported(t->dtype) || t->ndims < 1 || t->ndims > 2) return false;
  m->dtype = t->dtype;
  m->base = static_cast<char*>(simpler_tensor_data(t, t->dtype == CHIP_DT_FLOAT32 ? 4 : 2));
  if (t->ndims == 1) {
    m->rows = 1;
    m->cols = t->shapes[0];
    m->row_stride = 0;
    m->col_stride = t->strides[0];
  } else {
    m->rows = t->shapes[0];
    m->cols = t->shapes[1];
    m->row_stride = t->strides[0];
    m->col_stride = t->strides[1];
  }
  return true;
}

}  // namespace layer
