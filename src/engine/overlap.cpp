#include "engine/overlap.h"

#include <algorithm>
#include <limits>

namespace simpler::rt {
namespace {

constexpr int kMaxDims = ViewGeometry::kMaxDims;
constexpr int kMaxMergedDims = 2 * kMaxDims;

// Touches every byte of the buffer, as far as anyone can tell.
void make_opaque(ViewGeometry& g) {
  g.empty = false;
  g.lo = std::numeric_limits<int64_t>::min();
  g.hi = std::numeric_limits<int64_t>::max();
  g.dense = false;
  g.boxed = false;
  g.ndims = 0;
  g.elem_size = 0;
  g.base = 0;
  g.coords_valid = false;
  g.radix_fit = false;
}

// A dense view: the elements [lo, hi) / elem_size. Its box form is that interval, which
// touches exactly the same bytes however the view was shaped.
void set_interval(ViewGeometry& g, int64_t lo, int64_t hi, uint32_t elem_size) {
  interval_geometry(lo, hi, elem_size, g);
}

// Fast path for row-major contiguous views (whole tensors, blocks of full rows): fills
// `g` and returns true, or returns false and leaves the view to the general path.
bool describe_contiguous(const ChipTensor& view, uint32_t elem_size, ViewGeometry& g) {
  int64_t lo, hi;
  if (!contiguous_bytes(view, elem_size, lo, hi)) return false;
  set_interval(g, lo, hi, elem_size);
  return true;
}

// Fast path for the most common strided view, a tile of a row-major matrix: two
// dimensions, unit inner stride, both extents above 1, rows apart (stride above the row
// length) and a start offset >= 0. Fills `g` exactly as the general path would, with one
// division; returns false (leaving `g` alone) for anything else.
bool describe_tile(const ChipTensor& view, uint32_t elem_size, ViewGeometry& g) {
  if (view.ndims != 2 || view.strides[1] != 1) return false;
  const int64_t rows = view.shapes[0], cols = view.shapes[1], pitch = view.strides[0];
  const int64_t start = view.start_offset;
  if (rows < 2 || cols < 2 || pitch <= cols || start < 0) return false;
  const int64_t es = elem_size;
  int64_t last, lo, hi;
  if (__builtin_mul_overflow(rows - 1, pitch, &last) ||
      __builtin_add_overflow(last, start, &last) || __builtin_add_overflow(last, cols, &last) ||
      __builtin_mul_overflow(start, es, &lo) || __builtin_mul_overflow(last, es, &hi))
    return false;
  g.empty = false;
  g.lo = lo;
  g.hi = hi;
  g.dense = false;
  g.boxed = true;
  g.ndims = 2;
  g.elem_size = elem_size;
  g.base = start;
  g.strides[0] = 1;
  g.strides[1] = pitch;
  g.shapes[0] = cols;
  g.shapes[1] = rows;
  // 32-bit division when it suffices: several times cheaper than the 64-bit one.
  const int64_t row = (start | pitch) <= INT64_C(0xFFFFFFFF)
                          ? static_cast<uint32_t>(start) / static_cast<uint32_t>(pitch)
                          : start / pitch;
  g.coords[1] = row;
  g.coords[0] = start - row * pitch;
  g.coords_valid = true;
  g.radix_fit = g.coords[0] + cols <= pitch;
  return true;
}

// off == sum_k out[k] * strides[k], taking as much as possible from the largest stride
// (strides ascending, strides[0] == 1, off >= 0).
void greedy_coords(int64_t off, int nd, const int64_t* strides, int64_t* out) {
  for (int k = nd - 1; k > 0; --k) {
    out[k] = off / strides[k];
    off -= out[k] * strides[k];
  }
  out[0] = off;
}

// d == sum_k out[k] * strides[k] with each coordinate rounded to nearest: keeps the
// coordinates of two nearby tiles small even when neither start decomposes naturally.
void rounded_coords(int64_t d, int nd, const int64_t* strides, int64_t* out) {
  for (int k = nd - 1; k > 0; --k) {
    const int64_t s = strides[k];
    int64_t q = d / s;  // truncates towards zero; |d - q*s| < s, then round to nearest
    int64_t r = d - q * s;
    if (r > s / 2) {
      ++q;
      r -= s;
    } else if (r < -(s / 2)) {
      --q;
      r += s;
    }
    out[k] = q;
    d = r;
  }
  out[0] = d;
}

// Boxes [ca, ca+na) and [cb, cb+nb) over one stride list. Their images under
// x -> sum x_k s_k are related exactly like the boxes when that map is injective on
// the hull of both boxes: s_k > sum_{l<k} s_l * (hull_l - 1) for every k. Returns false
// (undecided) when that does not hold or the arithmetic would overflow.
bool decide_boxes(int nd, const int64_t* s, const int64_t* ca, const int64_t* na, const int64_t* cb,
                  const int64_t* nb, Relation* out) {
  int64_t reach = 0;  // largest offset the lower dimensions reach inside the hull
  bool overlap = true;
  bool covers = true;
  for (int k = 0; k < nd; ++k) {
    int64_t a1, b1, hull, step;
    if (s[k] <= reach || __builtin_add_overflow(ca[k], na[k], &a1) ||
        __builtin_add_overflow(cb[k], nb[k], &b1) ||
        __builtin_sub_overflow(std::max(a1, b1), std::min(ca[k], cb[k]) + 1, &hull) ||
        __builtin_mul_overflow(hull, s[k], &step) || __builtin_add_overflow(reach, step, &reach))
      return false;
    overlap = overlap & (ca[k] < b1) & (cb[k] < a1);
    covers = covers & (ca[k] <= cb[k]) & (b1 <= a1);
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

void merge_boxes(const ViewGeometry& a, const ViewGeometry& b, MergedBoxes& m) {
  int i = 0, j = 0;
  while (i < a.ndims || j < b.ndims) {
    const bool take_a = j >= b.ndims || (i < a.ndims && a.strides[i] <= b.strides[j]);
    const bool take_b = i >= a.ndims || (j < b.ndims && b.strides[j] <= a.strides[i]);
    m.s[m.nd] = take_a ? a.strides[i] : b.strides[j];
    m.na[m.nd] = take_a ? a.shapes[i++] : 1;
    m.nb[m.nd] = take_b ? b.shapes[j++] : 1;
    ++m.nd;
  }
}

bool same_strides(const ViewGeometry& a, const ViewGeometry& b) {
  if (a.ndims != b.ndims) return false;
  for (int k = 0; k < a.ndims; ++k)
    if (a.strides[k] != b.strides[k]) return false;
  return true;
}

bool relate_boxes(const ViewGeometry& a, const ViewGeometry& b, Relation* out) {
  const bool coords_ready = a.coords_valid && b.coords_valid && same_strides(a, b);
  if (coords_ready && decide_boxes(a.ndims, a.strides, a.coords, a.shapes, b.coords, b.shapes, out))
    return true;
  MergedBoxes m;
  merge_boxes(a, b, m);
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

// The non-trivial dimensions of `view` as (stride > 0, shape > 1), ascending by stride,
// equal strides merged ({(i + j) * s : i < n1, j < n2} == {k * s : k < n1 + n2 - 1}),
// with a unit-stride dimension in front. Adjusts g.base for flipped negative strides.
bool canonical_dims(const ChipTensor& view, ViewGeometry& g) {
  int64_t st[CHIP_TENSOR_MAX_DIMS], sh[CHIP_TENSOR_MAX_DIMS];
  int nd = 0;
  for (uint32_t k = 0; k < view.ndims; ++k) {
    const int64_t shape = view.shapes[k];
    int64_t stride = view.strides[k];
    if (shape == 1 || stride == 0) continue;  // contributes no new element
    if (stride < 0) {                         // walk it the other way round from its lowest element
      int64_t back;
      if (stride == std::numeric_limits<int64_t>::min() ||
          __builtin_mul_overflow(shape - 1, stride, &back) ||
          __builtin_add_overflow(g.base, back, &g.base))
        return false;
      stride = -stride;
    }
    int i = nd++;
    for (; i > 0 && st[i - 1] > stride; --i) {  // insertion sort; nd <= 5
      st[i] = st[i - 1];
      sh[i] = sh[i - 1];
    }
    st[i] = stride;
    sh[i] = shape;
  }
  int out = 0;
  if (nd == 0 || st[0] != 1) {
    g.strides[0] = 1;
    g.shapes[0] = 1;
    out = 1;
  }
  for (int i = 0; i < nd; ++i) {
    if (out > 0 && g.strides[out - 1] == st[i]) {
      if (__builtin_add_overflow(g.shapes[out - 1], sh[i] - 1, &g.shapes[out - 1])) return false;
    } else {
      g.strides[out] = st[i];
      g.shapes[out] = sh[i];
      ++out;
    }
  }
  g.ndims = static_cast<uint8_t>(out);
  return true;
}

}  // namespace

void describe_view(const ChipTensor& view, ViewGeometry& g) {
  const uint32_t elem_size = chip_dtype_size(view.dtype);
  if (elem_size == 0 || view.ndims < 1 || view.ndims > CHIP_TENSOR_MAX_DIMS) return make_opaque(g);
  if (describe_tile(view, elem_size, g) || describe_contiguous(view, elem_size, g)) return;
  bool empty = false;
  for (uint32_t k = 0; k < view.ndims; ++k) {
    if (view.shapes[k] < 0) return make_opaque(g);
    empty = empty || view.shapes[k] == 0;
  }
  make_opaque(g);
  if (empty) {
    g.empty = true;
    g.lo = g.hi = 0;
    return;
  }
  g.base = view.start_offset;
  if (!canonical_dims(view, g)) return make_opaque(g);

  int64_t last = g.base;  // highest element offset
  bool dense = true;
  int64_t span = 1;  // the lower dimensions cover [base, base + span) without a gap
  for (int k = 0; k < g.ndims; ++k) {
    int64_t step;
    if (__builtin_mul_overflow(g.shapes[k] - 1, g.strides[k], &step) ||
        __builtin_add_overflow(last, step, &last))
      return make_opaque(g);
    dense = dense && g.strides[k] <= span;
    if (dense) span += step;
  }
  const int64_t es = elem_size;
  int64_t lo, hi;
  if (__builtin_mul_overflow(g.base, es, &lo) || __builtin_add_overflow(last, 1, &last) ||
      __builtin_mul_overflow(last, es, &hi))
    return make_opaque(g);
  if (dense) return set_interval(g, lo, hi, elem_size);
  g.lo = lo;
  g.hi = hi;
  g.boxed = true;
  g.elem_size = elem_size;
  if (g.base < 0) return;
  greedy_coords(g.base, g.ndims, g.strides, g.coords);
  g.coords_valid = true;
  bool fit = true;
  for (int k = 0; fit && k + 1 < g.ndims; ++k) {
    const int64_t s = g.strides[k], next = g.strides[k + 1];
    const int64_t radix = s == 1 ? next : next / s;
    fit = (s == 1 || next % s == 0) && g.coords[k] + g.shapes[k] <= radix;
  }
  g.radix_fit = fit;
}

void move_box(const ViewGeometry& shape, int64_t lo, ViewGeometry& out) {
  copy_geometry(shape, out);
  out.hi = lo + (shape.hi - shape.lo);
  out.lo = lo;
  out.base = lo / shape.elem_size;
  greedy_coords(out.base, out.ndims, out.strides, out.coords);
  bool fit = true;
  for (int k = 0; fit && k + 1 < out.ndims; ++k) {
    const int64_t s = out.strides[k], next = out.strides[k + 1];
    const int64_t radix = s == 1 ? next : next / s;
    fit = (s == 1 || next % s == 0) && out.coords[k] + out.shapes[k] <= radix;
  }
  out.radix_fit = fit;
}

void copy_geometry(const ViewGeometry& src, ViewGeometry& dst) {
  dst.empty = src.empty;
  dst.lo = src.lo;
  dst.hi = src.hi;
  dst.dense = src.dense;
  dst.boxed = src.boxed;
  dst.ndims = src.ndims;
  dst.elem_size = src.elem_size;
  dst.base = src.base;
  dst.coords_valid = src.coords_valid;
  dst.radix_fit = src.radix_fit;
  for (int k = 0; k < src.ndims; ++k) {
    dst.strides[k] = src.strides[k];
    dst.shapes[k] = src.shapes[k];
    dst.coords[k] = src.coords[k];
  }
}

Relation relate(const ViewGeometry& a, const ViewGeometry& b) {
  if (a.empty || b.empty || !(a.lo < b.hi && b.lo < a.hi)) return {false, false};
  const bool a_spans_b = a.lo <= b.lo && b.hi <= a.hi;
  if (a.dense && a_spans_b) return {true, true};
  const bool b_spans_a = b.lo <= a.lo && a.hi <= b.hi;
  if (b.dense && b_spans_a) return {true, false};
  if (a.dense && b.dense) return {true, false};  // two intervals that intersect
  if (!a.boxed || !b.boxed || a.elem_size != b.elem_size) return {true, false};
  if (a.radix_fit && b.radix_fit && same_strides(a, b)) {
    // Both inside one mixed-radix parent: compare coordinate intervals.
    bool overlap = true, covers = true;
    for (int k = 0; k < a.ndims; ++k) {
      const int64_t a0 = a.coords[k], a1 = a0 + a.shapes[k];
      const int64_t b0 = b.coords[k], b1 = b0 + b.shapes[k];
      overlap = overlap & (a0 < b1) & (b0 < a1);
      covers = covers & (a0 <= b0) & (b1 <= a1);
    }
    return {overlap, covers};
  }
  Relation r;
  if (relate_boxes(a, b, &r)) return r;
  return {true, false};
}

}  // namespace simpler::rt
