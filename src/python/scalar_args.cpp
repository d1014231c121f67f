// Scalars of the borrowed argument form: Python and numpy numbers as the 64-bit patterns
// ChipStorageTaskArgs carries, converted to the signature's scalar type when it has one.
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>

#include "call_args.h"

namespace py = pybind11;

namespace simpler::python::detail {
namespace {

uint16_t half_bits(float value) {
  uint32_t x = 0;
  std::memcpy(&x, &value, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xffu);
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int32_t e = exp - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow: infinity
  if (e <= 0) {                                               // subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const auto shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // a carry rounds up the exponent
  return static_cast<uint16_t>(sign | half);
}

uint16_t bfloat16_bits(float value) {
  uint32_t x = 0;
  std::memcpy(&x, &value, 4);
  if (std::isnan(value)) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}

bool is_float_type(DataType d) {
  return d == DataType::FLOAT16 || d == DataType::BFLOAT16 || d == DataType::FLOAT32 ||
         d == DataType::FLOAT64;
}

uint64_t float_bits(double v, DataType d) {
  switch (d) {
    case DataType::FLOAT16:
      return half_bits(static_cast<float>(v));
    case DataType::BFLOAT16:
      return bfloat16_bits(static_cast<float>(v));
    case DataType::FLOAT64:
      return scalar_bits_from_f64(v);
    default:
      return scalar_bits_from_f32(static_cast<float>(v));
  }
}

// The range of an integer DataType as [lo, hi] in 128-bit terms.
void int_range(DataType d, __int128& lo, __int128& hi) {
  const auto bits = static_cast<int>(element_size(d) * 8);
  const bool is_signed =
      d == DataType::INT8 || d == DataType::INT16 || d == DataType::INT32 || d == DataType::INT64;
  if (d == DataType::BOOL) {
    lo = 0;
    hi = 1;
  } else if (is_signed) {
    lo = -(static_cast<__int128>(1) << (bits - 1));
    hi = (static_cast<__int128>(1) << (bits - 1)) - 1;
  } else {
    lo = 0;
    hi = (static_cast<__int128>(1) << bits) - 1;
  }
}

// Whether `bits` (a float_bits result of type d) is an infinity.
bool is_infinite_bits(uint64_t bits, DataType d) {
  switch (d) {
    case DataType::FLOAT16:
      return (bits & 0x7fffu) == 0x7c00u;
    case DataType::BFLOAT16:
      return (bits & 0x7fffu) == 0x7f80u;
    case DataType::FLOAT64:
      return std::isinf(scalar_bits_to_f64(bits));
    default:
      return std::isinf(scalar_bits_to_f32(bits));
  }
}

// float_bits, refusing a finite value the typed float type cannot hold (it would arrive
// as infinity). NaN and infinities pass as given.
uint64_t checked_float_bits(const PackTarget& t, uint32_t i, const ArgSpec& spec, double v,
                            py::handle value) {
  const uint64_t bits = float_bits(v, *spec.dtype);
  if (std::isfinite(v) && is_infinite_bits(bits, *spec.dtype)) {
    bad_value(t, i, spec,
              py::repr(value).cast<std::string>() + " is out of range for " +
                  data_type_name(*spec.dtype) + " (it would become infinity)");
  }
  return bits;
}

std::string int_text(__int128 v) {
  const bool negative = v < 0;
  auto u = static_cast<unsigned __int128>(negative ? -v : v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  return negative ? "-" + digits : digits;
}

// An integer `v` (the value of `value`) for the typed integer (or BOOL) slot, range-checked.
uint64_t checked_int_bits(const PackTarget& t, uint32_t i, const ArgSpec& spec, __int128 v,
                          py::handle value) {
  __int128 lo = 0, hi = 0;
  int_range(*spec.dtype, lo, hi);
  if (v < lo || v > hi) {
    bad_value(t, i, spec,
              py::str(value).cast<std::string>() + " is out of range for " +
                  data_type_name(*spec.dtype) + " (" + int_text(lo) + ".." + int_text(hi) + ")");
  }
  return static_cast<uint64_t>(v);
}

uint64_t int_bits(const PackTarget& t, uint32_t i, const ArgSpec& spec, py::handle value) {
  if (spec.dtype && is_float_type(*spec.dtype)) {  // any int a double holds, e.g. 2**70
    const double d = PyLong_AsDouble(value.ptr());
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      bad_value(t, i, spec,
                py::repr(value).cast<std::string>() + " is out of range for " +
                    data_type_name(*spec.dtype));
    }
    return checked_float_bits(t, i, spec, d, value);
  }
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  __int128 v = s;
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      bad_value(t, i, spec, py::str(value).cast<std::string>() + " does not fit 64 bits");
    }
    v = static_cast<__int128>(u);
  } else if (overflow < 0) {
    bad_value(t, i, spec, py::str(value).cast<std::string>() + " does not fit 64 bits");
  }
  if (!spec.dtype) return static_cast<uint64_t>(v);  // untyped: the 64-bit pattern
  __int128 lo = 0, hi = 0;
  int_range(*spec.dtype, lo, hi);
  return checked_int_bits(t, i, spec, v, value);
}

// The DataType of a numpy scalar, from its dtype's kind and size.
std::optional<DataType> numpy_scalar_type(py::handle value) {
  py::object dtype = value.attr("dtype");
  const auto kind = dtype.attr("kind").cast<std::string>();
  const auto size = dtype.attr("itemsize").cast<size_t>();
  const auto name = dtype.attr("name").cast<std::string>();
  if (name == "bfloat16") return DataType::BFLOAT16;
  const char format = kind == "f"   ? (size == 2   ? 'e'
                                       : size == 4 ? 'f'
                                                   : 'd')
                      : kind == "i" ? 'q'
                      : kind == "u" ? 'Q'
                      : kind == "b" ? '?'
                                    : 'x';
  if (format == 'x' || (kind == "f" && size != 2 && size != 4 && size != 8)) return std::nullopt;
  const char f[2] = {format, 0};
  return detail::dtype_of_format(f, size);
}

PyTypeObject* numpy_generic() {
  static PyObject* generic = [] {
    py::object g = py::module_::import("numpy").attr("generic");
    return g.release().ptr();  // immortal for the process
  }();
  return reinterpret_cast<PyTypeObject*>(generic);
}

// numpy scalar types seen before, by type object: numpy_scalar_type asks numpy for the
// dtype's attributes (~2 us); a type's dtype never changes. Guarded by the GIL; each entry
// holds a reference to its type, so a pointer is never reused by another type.
std::optional<DataType> cached_numpy_type(py::handle value) {
  struct Entry {
    PyTypeObject* type;
    DataType dtype;
  };
  static Entry cache[16];
  static size_t used = 0;
  PyTypeObject* type = Py_TYPE(value.ptr());
  for (size_t k = 0; k < used; ++k) {
    if (cache[k].type == type) return cache[k].dtype;
  }
  const auto given = numpy_scalar_type(value);
  if (given && used < std::size(cache)) {
    Py_INCREF(reinterpret_cast<PyObject*>(type));
    cache[used++] = {type, *given};
  }
  return given;
}

// The scalar's bytes as stored (little-endian, its own width) in the low bits.
uint64_t numpy_raw_bits(py::handle value) {
  uint64_t bits = 0;
  Py_buffer view;
  if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_SIMPLE) == 0) {  // numpy's: no copy
    std::memcpy(&bits, view.buf, std::min(static_cast<size_t>(view.len), sizeof bits));
    PyBuffer_Release(&view);
    return bits;
  }
  PyErr_Clear();  // a scalar type without the buffer protocol
  const std::string raw = value.attr("tobytes")().cast<std::string>();
  std::memcpy(&bits, raw.data(), std::min(raw.size(), sizeof bits));
  return bits;
}

float half_value(uint64_t bits) {
  const auto h = static_cast<uint32_t>(bits & 0xffffu);
  const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return mant ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);  // subnormal
  return sign * std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
}

// The value of a float scalar's bits of type d, as a double (exact for every width).
double float_value(uint64_t bits, DataType d) {
  switch (d) {
    case DataType::FLOAT16:
      return half_value(bits);
    case DataType::BFLOAT16:
      return scalar_bits_to_f32((bits & 0xffffu) << 16);
    case DataType::FLOAT64:
      return scalar_bits_to_f64(bits);
    default:
      return scalar_bits_to_f32(bits);
  }
}

uint64_t numpy_scalar_bits(const PackTarget& t, uint32_t i, const ArgSpec& spec, py::handle value) {
  const auto given = cached_numpy_type(value);
  if (!given) {
    bad_type(t, i, spec,
             std::string("numpy scalar of dtype ") +
                 py::str(value.attr("dtype")).cast<std::string>() +
                 " has no DataType (pass a numpy int, float or bool, or a Python number)");
  }
  uint64_t bits = numpy_raw_bits(value);
  const bool given_float = is_float_type(*given);
  if (!given_float && *given != DataType::BOOL) {
    const auto size = element_size(*given);
    const bool is_signed = *given == DataType::INT8 || *given == DataType::INT16 ||
                           *given == DataType::INT32 || *given == DataType::INT64;
    if (size < 8) bits &= (uint64_t{1} << (size * 8)) - 1;
    if (is_signed && size < 8 && (bits >> (size * 8 - 1)) & 1u) {
      bits |= ~uint64_t{0} << (size * 8);  // sign-extend like add_scalar_i64
    }
  }
  if (!spec.dtype || *spec.dtype == *given) return bits;  // its own type: the fast path
  // Another type: a numpy number converts like the Python number of its value (a float to
  // any float type, rounded; an int to any number type, range-checked); a float is not an
  // int, and numpy.bool_ is a number only for BOOL (like Python's bool).
  if (given_float && is_float_type(*spec.dtype)) {
    return checked_float_bits(t, i, spec, float_value(bits, *given), value);
  }
  if (!given_float && *given != DataType::BOOL) {
    const bool is_signed = *given == DataType::INT8 || *given == DataType::INT16 ||
                           *given == DataType::INT32 || *given == DataType::INT64;
    const auto s = static_cast<int64_t>(bits);
    if (is_float_type(*spec.dtype)) {  // rounded to nearest, like PyLong_AsDouble
      const double d = is_signed ? static_cast<double>(s) : static_cast<double>(bits);
      return checked_float_bits(t, i, spec, d, value);
    }
    return checked_int_bits(t, i, spec, is_signed ? __int128{s} : __int128{bits}, value);
  }
  if (given_float) {
    bad_type(t, i, spec,
             std::string("expected an int for a ") + data_type_name(*spec.dtype) +
                 " scalar, got numpy " + data_type_name(*given) + " " +
                 py::repr(value).cast<std::string>());
  }
  bad_type(t, i, spec,
           std::string("expected a ") + data_type_name(*spec.dtype) + " scalar, got numpy " +
               data_type_name(*given) + " " + py::repr(value).cast<std::string>() +
               " (pass a number)");
}

}  // namespace

uint64_t pack_scalar(const PackTarget& t, uint32_t i, const ArgSpec& spec, py::handle value) {
  PyObject* v = value.ptr();
  // numpy first: numpy.float64 is also a Python float, and keeps its own type.
  if (!PyFloat_CheckExact(v) && !PyLong_CheckExact(v) && PyObject_TypeCheck(v, numpy_generic())) {
    return numpy_scalar_bits(t, i, spec, value);
  }
  // A bool is a number only where the kernel expects one: a BOOL scalar, or an untyped
  // slot (its 64-bit pattern 0/1). Elsewhere it is refused, like numpy.bool_.
  if (PyBool_Check(v) && spec.dtype && *spec.dtype != DataType::BOOL) {
    bad_type(t, i, spec,
             std::string("expected a ") + data_type_name(*spec.dtype) + " scalar, got bool " +
                 py::repr(value).cast<std::string>() + " (pass a number)");
  }
  if (PyLong_Check(v)) return int_bits(t, i, spec, value);
  if (PyFloat_Check(v)) {
    const double d = PyFloat_AS_DOUBLE(v);
    // Untyped: FLOAT32, the kernels' common scalar type (typed signatures say otherwise).
    if (!spec.dtype) {
      const auto f = static_cast<float>(d);
      if (std::isfinite(d) && std::isinf(f)) {
        bad_value(t, i, spec,
                  py::repr(value).cast<std::string>() +
                      " is out of range for FLOAT32 (it would become infinity; an untyped float "
                      "scalar is passed as FLOAT32: pass numpy.float64(v) for a double)");
      }
      return scalar_bits_from_f32(f);
    }
    if (!is_float_type(*spec.dtype)) {
      bad_type(t, i, spec,
               std::string("expected an int for a ") + data_type_name(*spec.dtype) +
                   " scalar, got float " + py::repr(value).cast<std::string>());
    }
    return checked_float_bits(t, i, spec, d, value);
  }
  bool array0d = false;  // numpy's or torch's: it has .item()
  if (PyObject* ndim = PyObject_GetAttrString(v, "ndim")) {
    array0d = PyLong_CheckExact(ndim) && PyLong_AsLong(ndim) == 0;
    Py_DECREF(ndim);
  }
  PyErr_Clear();
  bad_type(t, i, spec,
           std::string("expected a Python or numpy number for a scalar, got ") + type_name(value) +
               (array0d ? " (a 0-d array: pass x.item() or x[()])" : ""));
}

}  // namespace simpler::python::detail
