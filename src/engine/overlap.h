// simpler runtime — which bytes of its buffer a strided view touches, and whether two
// views of one buffer can share a byte (internal, used by the tensor map).
//
// A view is put once into a canonical box form (ascending positive strides, unit-stride
// dimension first, broadcast/size-1 dimensions dropped, negative strides flipped; a dense
// view becomes the interval of its elements). Two views are then compared exactly per
// dimension whenever the linear map from box coordinates to element offsets is injective
// on their common hull; otherwise by their byte ranges, which is conservative.
#pragma once

#include <cstdint>

#include "simpler/abi/chip_types.h"

namespace simpler::rt {

// Element size in bytes of a ChipDataType value; 0 when the value names no type.
inline uint32_t chip_dtype_size(uint32_t dtype) {
  // FLOAT32, FLOAT16, BFLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
  // BOOL, FLOAT64
  static constexpr uint8_t kSizes[CHIP_DT_COUNT] = {4, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1, 8};
  return dtype < CHIP_DT_COUNT ? kSizes[dtype] : 0;
}

// A row-major contiguous view (a whole tensor, a block of full rows; every extent >= 1) of
// elements of `elem_size` bytes (a chip_dtype_size: 1 to 8) touches exactly the bytes
// [lo, hi): true and sets them, as describe_view would; false for any other view (or int64
// overflow).
inline bool contiguous_bytes(const ChipTensor& view, uint32_t elem_size, int64_t& lo, int64_t& hi) {
  // A slice with start < 2^59 and 1 <= extent <= 2^59 ends below 2^60 elements: with at most
  // 8 bytes each, no product overflows, so the checks below are skipped.
  if (view.ndims == 1) {
    const uint64_t start = static_cast<uint64_t>(view.start_offset);
    const uint64_t n = static_cast<uint64_t>(view.shapes[0]);
    if ((((n - 1) | start) >> 59) == 0 && (n == 1 || view.strides[0] == 1)) {  // (n - 1 wraps at 0)
      lo = static_cast<int64_t>(start * elem_size);
      hi = static_cast<int64_t>((start + n) * elem_size);
      return true;
    }
  }
  if (view.ndims < 1 || view.ndims > CHIP_TENSOR_MAX_DIMS) return false;
  int64_t numel = 1;  // also the stride dimension k must have to continue the run
  for (int k = static_cast<int>(view.ndims) - 1; k >= 0; --k) {
    const int64_t n = view.shapes[k];
    if (n <= 0 || (n != 1 && view.strides[k] != numel)) return false;
    if (__builtin_mul_overflow(numel, n, &numel)) return false;
  }
  const int64_t es = elem_size;
  int64_t end;
  return !__builtin_add_overflow(view.start_offset, numel, &end) &&
         !__builtin_mul_overflow(view.start_offset, es, &lo) &&
         !__builtin_mul_overflow(end, es, &hi);
}

struct ViewGeometry {
  static constexpr int kMaxDims = CHIP_TENSOR_MAX_DIMS + 1;  // + the unit-stride dimension

  bool empty = false;  // some extent is 0: the view touches no byte
  // Every touched byte lies in [lo, hi) (bytes from buffer.addr); `dense` when every
  // byte of that range is touched.
  int64_t lo = 0;
  int64_t hi = 0;
  bool dense = false;
  // Box form: touched elements = { base + sum_k i_k * strides[k] : 0 <= i_k < shapes[k] },
  // strides strictly ascending with strides[0] == 1, shapes >= 1. `boxed` is false when the
  // descriptor could not be put in this form (invalid dtype/ndims/shape or int64 overflow):
  // such a view counts as touching every byte of its buffer.
  bool boxed = false;
  uint8_t ndims = 0;
  uint32_t elem_size = 0;
  int64_t base = 0;
  // base == sum_k coords[k] * strides[k] (greedy, from the largest stride); valid when
  // base >= 0. Precomputed so that views with equal strides compare without division.
  bool coords_valid = false;
  // Each stride divides the next and coords[k] + shapes[k] <= strides[k+1] / strides[k]:
  // the box sits inside one mixed-radix "parent" (a tile of a row-major tensor). Two such
  // boxes with equal strides overlap exactly when their coordinate intervals do.
  bool radix_fit = false;
  // Only the first `ndims` entries are meaningful (left uninitialised on purpose: this
  // struct is filled once per tensor access on the hot path).
  int64_t strides[kMaxDims];
  int64_t shapes[kMaxDims];
  int64_t coords[kMaxDims];
};

// Fills `out` (every field that is meaningful for the result).
void describe_view(const ChipTensor& view, ViewGeometry& out);
inline ViewGeometry describe_view(const ChipTensor& view) {
  ViewGeometry g;
  describe_view(view, g);
  return g;
}

// The geometry of a dense view from its byte range alone: the interval of elements
// [lo / elem_size, hi / elem_size), which touches exactly the same bytes. Fills and
// returns `out`.
// Inline: it is on the hot path of every new contiguous view.
inline const ViewGeometry& interval_geometry(int64_t lo, int64_t hi, uint32_t elem_size,
                                             ViewGeometry& g) {
  g.empty = false;
  g.lo = lo;
  g.hi = hi;
  g.dense = true;
  g.boxed = true;
  g.ndims = 1;
  g.elem_size = elem_size;
  // Element sizes are powers of two and lo, hi multiples of it: a shift is the exact
  // quotient (a 64-bit division costs tens of cycles on this hot path).
  const int shift = __builtin_ctz(elem_size);
  g.base = lo >> shift;
  g.strides[0] = 1;
  g.shapes[0] = (hi - lo) >> shift;
  g.coords[0] = g.base;
  g.coords_valid = g.base >= 0;
  g.radix_fit = g.coords_valid;
  return g;
}

// The view of the same shape as `shape` (a boxed, not dense view with valid coordinates)
// whose first byte is `lo` (>= 0, a multiple of its element size): what describe_view
// gives for the view that `shape` describes, moved by lo - shape.lo bytes. Fills `out`.
void move_box(const ViewGeometry& shape, int64_t lo, ViewGeometry& out);

// Copies the meaningful part of `src` (cheaper than the whole struct).
void copy_geometry(const ViewGeometry& src, ViewGeometry& dst);

struct Relation {
  bool overlap;  // the views may share a byte (false only when provably disjoint)
  bool covers;   // `a` provably touches every byte `b` touches
};

// Relation of two views of the same buffer. Exact whenever decidable as described above;
// otherwise `overlap` errs towards true and `covers` towards false, never the reverse.
Relation relate(const ViewGeometry& a, const ViewGeometry& b);

}  // namespace simpler::rt
