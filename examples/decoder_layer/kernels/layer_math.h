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

// c = a @ b, accumulated in float32 in k order and rounded once at the store. The fused
// attention kernel uses the same function as the matmul kernel, so both give the same bits.
inline void matmul_tile(const Matrix& a, const Matrix& b, const Matrix& c) {
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t j = 0; j < c.cols; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < a.cols; ++k) acc += a.get(i, k) * b.get(k, j);
      c.set(i, j, acc);
    }
  }
}

// Causal softmax of row i of s in place: columns 0..last take part (scaled by `scale`),
// later ones become 0.
inline void softmax_row(const Matrix& s, int64_t i, float scale, int64_t last) {
  float peak = -INFINITY;
  for (int64_t j = 0; j <= last; ++j) peak = std::fmax(peak, s.get(i, j) * scale);
  float sum = 0.0f;
  for (int64_t j = 0; j <= last; ++j) sum += std::exp(s.get(i, j) * scale - peak);
  // Normalise from the stored (rounded) inputs again so every element sees one sum.
  for (int64_t j = 0; j < s.cols; ++j)
    s.set(i, j, j <= last ? std::exp(s.get(i, j) * scale - peak) / sum : 0.0f);
}

// The last key position query row i (at position pos0 + i) may attend to.
inline int64_t causal_last(int64_t pos0, int64_t i, int64_t cols) {
  return pos0 + i < cols ? pos0 + i : cols - 1;
}

// Rows [row, row + rows) of m.
inline Matrix rows_of(const Matrix& m, int64_t row, int64_t rows) {
  Matrix v = m;
  v.base = m.at(row, 0);
  v.rows = rows;
  return v;
}

// The transpose of m (a view: no copy).
inline Matrix transposed(const Matrix& m) {
  Matrix t = m;
  t.rows = m.cols;
  t.cols = m.rows;
  t.row_stride = m.col_stride;
  t.col_stride = m.row_stride;
  return t;
}

}  // namespace layer
