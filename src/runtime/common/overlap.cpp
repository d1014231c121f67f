#include "common/overlap.h"

#include <algorithm>
#include <limits>

namespace simpler::rt {
namespace {

using i128 = __int128;
constexpr int kMaxDims = ViewGeometry::kMaxDims;
constexpr int kMaxMergedDims = 2 * kMaxDims;

// Touches every byte of the buffer, as far as anyone can tell.
ViewGeometry opaque_view() {
  ViewGeometry g;
  g.lo = std::numeric_limits<int64_t>::min();
  g.hi = std::numeric_limits<int64_t>::max();
  return g;
}

// Inserts (stride, shape) into the ascending list; equal strides merge, since
// {(i + j) * s : i < n1, j < n2} == {k * s : k < n1 + n2 - 1}.
bool insert_dim(ViewGeometry& g, int64_t stride, int64_t shape) {
  int k = 0;
  while (k < g.ndims && g.strides[k] < stride) ++k;
  if (k < g.ndims && g.strides[k] == stride) {
    int64_t merged;
    if (__builtin_add_overflow(g.shapes[k], shape - 1, &merged)) return false;
    g.shapes[k] = merged;
    return true;
  }
  for (int m = g.ndims; m > k; --m) {
    g.strides[m] = g.strides[m - 1];
    g.shapes[m] = g.shapes[m - 1];
  }
  g.strides[k] = stride;
  g.shapes[k] = shape;
  ++g.ndims;
  return true;
}

// off == sum_k out[k] * strides[k], taking as much as possible from the largest stride.
void greedy_coords(int64_t off, int nd, const int64_t* strides, int64_t* out) {
  for (int k = nd - 1; k >= 0; --k) {
    out[k] = off / strides[k];
    off %= strides[k];
  }
}

// d == sum_k out[k] * strides[k] with each coordinate rounded to nearest: keeps the
// coordinates of two nearby tiles small even when neither start decomposes naturally.
void rounded_coords(int64_t d, int nd, const int64_t* strides, int64_t* out) {
  i128 rem = d;
  for (int k = nd - 1; k >= 0; --k) {
    const i128 s = strides[k];
    i128 num = rem + s / 2;
    i128 q = num / s;
    if (num % s != 0 && num < 0) --q;  // floor division
    out[k] = static_cast<int64_t>(q);
    rem -= q * s;
  }
}

// Boxes [ca, ca+na) and [cb, cb+nb) over one stride list. Their images under
// x -> sum x_k s_k are related exactly like the boxes when that map is injective on
// the hull of both boxes: s_k > sum_{l<k} s_l * (hull_l - 1) for every k. Returns false
// (undecided) when that does not hold.
bool decide_boxes(int nd, const int64_t* s, const int64_t* ca, const int64_t* na,
                  const int64_t* cb, const int64_t* nb, Relation* out) {
  i128 reach = 0;  // largest offset the lower dimensions reach inside the hull
  bool overlap = true;
  bool covers = true;
  for (int k = 0; k < nd; ++k) {
    const i128 a0 = ca[k], a1 = a0 + na[k];
    const i128 b0 = cb[k], b1 = b0 + nb[k];
    if (s[k] <= reach) return false;
    const i128 hull = std::max(a1, b1) - std::min(a0, b0);
    reach += (hull - 1) * s[k];
    overlap = overlap && a0 < b1 && b0 < a1;
    covers = covers && a0 <= b0 && b1 <= a1;
  }
  out->overlap = overlap;
  out->covers = covers;
  return true;
}

// Both views on the union of their stride lists (missing dimensions have extent 1).
struct MergedBoxes {
  int nd = 0;
  int64_t s[kMaxMergedDims];
  int64_t na[kMaxMergedDims];
  int64_t nb[kMaxMergedDims];
};

MergedBoxes merge_boxes(const ViewGeometry& a, const ViewGeometry& b) {
  MergedBoxes m;
  int i = 0, j = 0;
  while (i < a.ndims || j < b.ndims) {
    const bool take_a = j >= b.ndims || (i < a.ndims && a.strides[i] <= b.strides[j]);
    const bool take_b = i >= a.ndims || (j < b.ndims && b.strides[j] <= a.strides[i]);
    m.s[m.nd] = take_a ? a.strides[i] : b.strides[j];
    m.na[m.nd] = take_a ? a.shapes[i++] : 1;
    m.nb[m.nd] = take_b ? b.shapes[j++] : 1;
    ++m.nd;
  }
  return m;
}

bool same_strides(const ViewGeometry& a, const ViewGeometry& b) {
  if (a.ndims != b.ndims) return false;
  for (int k = 0; k < a.ndims; ++k)
    if (a.strides[k] != b.strides[k]) return false;
  return true;
}

bool relate_boxes(const ViewGeometry& a, const ViewGeometry& b, Relation* out) {
  const bool coords_ready = a.coords_valid && b.coords_valid && same_strides(a, b);
  if (coords_ready &&
      decide_boxes(a.ndims, a.strides, a.coords, a.shapes, b.coords, b.shapes, out))
    return true;
  const MergedBoxes m = merge_boxes(a, b);
  int64_t ca[kMaxMergedDims], cb[kMaxMergedDims];
  if (!coords_ready && a.base >= 0 && b.base >= 0) {
    greedy_coords(a.base, m.nd, m.s, ca);
    greedy_coords(b.base, m.nd, m.s, cb);
    if (decide_boxes(m.nd, m.s, ca, m.na, cb, m.nb, out)) return true;
  }
  // Second chance: place `a` at the origin and `b` relative to it.
  int64_t d;
  if (__builtin_sub_overflow(b.base, a.base, &d)) return false;
  std::fill(ca, ca + m.nd, 0);
  rounded_coords(d, m.nd, m.s, cb);
  return decide_boxes(m.nd, m.s, ca, m.na, cb, m.nb, out);
}

}  // namespace

uint32_t chip_dtype_size(uint32_t dtype) {
  switch (dtype) {
    case CHIP_DT_INT8:
    case CHIP_DT_UINT8:
    case CHIP_DT_BOOL:
      return 1;
    case CHIP_DT_FLOAT16:
    case CHIP_DT_BFLOAT16:
    case CHIP_DT_INT16:
    case CHIP_DT_UINT16:
      return 2;
    case CHIP_DT_FLOAT32:
    case CHIP_DT_INT32:
    case CHIP_DT_UINT32:
      return 4;
    case CHIP_DT_INT64:
    case CHIP_DT_UINT64:
    case CHIP_DT_FLOAT64:
      return 8;
    default:
      return 0;
  }
}

ViewGeometry describe_view(const ChipTensor& view) {
  const uint32_t elem_size = chip_dtype_size(view.dtype);
  if (elem_size == 0 || view.ndims < 1 || view.ndims > CHIP_TENSOR_MAX_DIMS) return opaque_view();
  for (uint32_t k = 0; k < view.ndims; ++k) {
    if (view.shapes[k] < 0) return opaque_view();
  }
  ViewGeometry g;
  for (uint32_t k = 0; k < view.ndims; ++k) {
    if (view.shapes[k] == 0) {
      g.empty = true;
      return g;
    }
  }
  g.elem_size = elem_size;
  g.base = view.start_offset;
  for (uint32_t k = 0; k < view.ndims; ++k) {
    const int64_t shape = view.shapes[k];
    int64_t stride = view.strides[k];
    if (shape == 1 || stride == 0) continue;  // contributes no new element
    if (stride < 0) {  // walk it the other way round from its lowest element
      int64_t back;
      if (stride == std::numeric_limits<int64_t>::min() ||
          __builtin_mul_overflow(shape - 1, stride, &back) ||
          __builtin_add_overflow(g.base, back, &g.base))
        return opaque_view();
      stride = -stride;
    }
    if (!insert_dim(g, stride, shape)) return opaque_view();
  }
  if (g.ndims == 0 || g.strides[0] != 1) insert_dim(g, 1, 1);

  int64_t last = g.base;  // highest element offset
  bool dense = true;
  int64_t span = 1;  // the lower dimensions cover [base, base + span) without a gap
  for (int k = 0; k < g.ndims; ++k) {
    int64_t step;
    if (__builtin_mul_overflow(g.shapes[k] - 1, g.strides[k], &step) ||
        __builtin_add_overflow(last, step, &last))
      return opaque_view();
    dense = dense && g.strides[k] <= span;
    if (dense) span += step;
  }
  if (__builtin_mul_overflow(g.base, static_cast<int64_t>(elem_size), &g.lo) ||
      __builtin_add_overflow(last, 1, &last) ||
      __builtin_mul_overflow(last, static_cast<int64_t>(elem_size), &g.hi))
    return opaque_view();
  g.dense = dense;
  g.boxed = true;
  if (g.base >= 0) {
    greedy_coords(g.base, g.ndims, g.strides, g.coords);
    g.coords_valid = true;
  }
  return g;
}

Relation relate(const ViewGeometry& a, const ViewGeometry& b) {
  if (a.empty || b.empty || !(a.lo < b.hi && b.lo < a.hi)) return {false, false};
  const bool a_spans_b = a.lo <= b.lo && b.hi <= a.hi;
  if (a.dense && a_spans_b) return {true, true};
  const bool b_spans_a = b.lo <= a.lo && a.hi <= b.hi;
  if (b.dense && b_spans_a) return {true, false};
  if (a.dense && b.dense) return {true, false};  // two intervals that intersect
  Relation r;
  if (a.boxed && b.boxed && a.elem_size == b.elem_size && relate_boxes(a, b, &r)) return r;
  return {true, false};
}

}  // namespace simpler::rt
