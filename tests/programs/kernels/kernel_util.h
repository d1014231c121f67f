// Helpers for the test kernels (header-only: kernels link against nothing of ours).
#pragma once

#include <stdint.h>

#include "simpler/kernel/kernel_abi.h"

namespace test_kernels {

inline int64_t numel(const ChipTensor& t) {
  int64_t n = 1;
  for (uint32_t d = 0; d < t.ndims; ++d) n *= t.shapes[d];
  return n;
}

inline bool same_shape(const ChipTensor& a, const ChipTensor& b) {
  if (a.ndims != b.ndims) return false;
  for (uint32_t d = 0; d < a.ndims; ++d) {
    if (a.shapes[d] != b.shapes[d]) return false;
  }
  return true;
}

template <typename T>
inline T* base(const ChipTensor& t) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(t.buffer.addr));
}

// Calls f(offsets) for every element of N same-shaped (possibly strided) views, where
// offsets[k] is the element offset of that element in view k (add to base<T>(view k)).
template <int N, typename F>
inline void for_each_element(const ChipTensor* const (&views)[N], F&& f) {
  const ChipTensor& shape = *views[0];
  const int64_t total = numel(shape);
  if (total == 0) return;
  int64_t index[CHIP_TENSOR_MAX_DIMS] = {0, 0, 0, 0, 0};
  int64_t offsets[N];
  for (int k = 0; k < N; ++k) offsets[k] = views[k]->start_offset;
  for (int64_t i = 0; i < total; ++i) {
    f(offsets);
    for (int d = static_cast<int>(shape.ndims) - 1; d >= 0; --d) {
      ++index[d];
      for (int k = 0; k < N; ++k) offsets[k] += views[k]->strides[d];
      if (index[d] < shape.shapes[d]) break;
      for (int k = 0; k < N; ++k) offsets[k] -= views[k]->strides[d] * shape.shapes[d];
      index[d] = 0;
    }
  }
}

}  // namespace test_kernels
