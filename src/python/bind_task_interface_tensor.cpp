// ChipTensor: device tensors from a pointer, host tensors from any buffer-protocol object,
// zero-copy views. Every rule lives in the C++ task interface; this file only converts.
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "element_kind.h"
#include "process_local.h"
#include "task_interface_types.h"

namespace py = pybind11;

namespace simpler::python {

HostBufferLease::HostBufferLease(py::handle obj, bool producer_writable)
    : producer_writable_(producer_writable) {
  if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_RECORDS) != 0) {
    PyErr_Clear();  // not writable (bytes, read-only arrays): export read-only instead
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_RECORDS_RO) != 0) {
      PyErr_Clear();
      throw py::type_error(std::string("expected a buffer-protocol object (numpy array, "
                                       "bytearray, memoryview, ...), got ") +
                           Py_TYPE(obj.ptr())->tp_name);
    }
  }
}

HostBufferLease::~HostBufferLease() {
  py::gil_scoped_acquire gil;
  PyBuffer_Release(&view_);
}

namespace detail {

std::optional<DataType> dtype_of_format(const char* format, size_t itemsize) {
  std::string f = format ? format : "B";
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.erase(0, 1);
  if (f.size() != 1) return std::nullopt;
  switch (f[0]) {
    case 'e':
    case 'f':
    case 'd':
      return data_type_of_kind(ElementKind::kFloat, itemsize);
    case '?':
      return data_type_of_kind(ElementKind::kBool, itemsize);
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
      return data_type_of_kind(ElementKind::kInt, itemsize);
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
      return data_type_of_kind(ElementKind::kUInt, itemsize);
    default:
      return std::nullopt;
  }
}

namespace {

[[noreturn]] void out_of_range(const py::object& index, const char* what,
                               const std::string& range) {
  throw py::value_error(std::string(what) + ": " + py::str(index).cast<std::string>() +
                        " is out of range (" + range + ")");
}

}  // namespace

bool is_bool(py::handle value) {
  if (PyBool_Check(value.ptr())) return true;
  const std::string_view name = Py_TYPE(value.ptr())->tp_name;
  return name == "numpy.bool_" || name == "numpy.bool";
}

bool is_enum(py::handle value) {  // pybind11's and Python's enum classes list __members__
  if (PyLong_CheckExact(value.ptr())) return false;
  auto* type = reinterpret_cast<PyObject*>(Py_TYPE(value.ptr()));
  return PyObject_HasAttrString(type, "__members__") == 1;
}

py::object index_or_null(py::handle value) {
  if (is_bool(value) || is_enum(value) || !PyIndex_Check(value.ptr())) return py::object();
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) PyErr_Clear();
  return index;
}

py::object index_of(py::handle value, const char* what) {
  py::object index = index_or_null(value);
  if (!index) {
    throw py::type_error(std::string(what) + ": expected an int, got " +
                         Py_TYPE(value.ptr())->tp_name);
  }
  return index;
}

int64_t int_arg(py::handle value, const char* what, int64_t lo, int64_t hi) {
  const py::object index = index_of(value, what);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0 || v < lo || v > hi) {
    out_of_range(index, what, std::to_string(lo) + ".." + std::to_string(hi));
  }
  return v;
}

uint64_t u64_arg(py::handle value, const char* what) {
  const py::object index = index_of(value, what);
  const unsigned long long v = PyLong_AsUnsignedLongLong(index.ptr());
  if (PyErr_Occurred()) {  // a TypeError, as pybind11's own uint64_t refusal always was
    PyErr_Clear();
    throw py::type_error(std::string(what) +
                         ": expected an unsigned 64-bit int (0..2**64-1), got " +
                         py::str(index).cast<std::string>());
  }
  return v;
}

std::vector<int64_t> ints_arg(py::handle value, const char* what) {
  if (!PySequence_Check(value.ptr()) || PyUnicode_Check(value.ptr()) ||
      PyBytes_Check(value.ptr())) {
    throw py::type_error(std::string(what) + ": expected a sequence of ints, got " +
                         Py_TYPE(value.ptr())->tp_name);
  }
  std::vector<int64_t> out;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(value)) {
    const std::string name = std::string(what) + "[" + std::to_string(out.size()) + "]";
    out.push_back(int_arg(item, name.c_str(), INT64_MIN, INT64_MAX));
  }
  return out;
}

DataType data_type_arg(py::handle value, const char* what) {
  if (!py::isinstance<DataType>(value)) {
    throw py::type_error(std::string(what) + ": expected a DataType (e.g. DataType.FLOAT32), got " +
                         Py_TYPE(value.ptr())->tp_name);
  }
  return value.cast<DataType>();
}

double float_arg(py::handle value, const char* what) {
  if (PyBool_Check(value.ptr()) || !(PyFloat_Check(value.ptr()) || PyIndex_Check(value.ptr()) ||
                                     py::hasattr(value, "__float__"))) {
    throw py::type_error(std::string(what) + ": expected a number, got " +
                         Py_TYPE(value.ptr())->tp_name);
  }
  const double v = PyFloat_AsDouble(value.ptr());
  if (PyErr_Occurred()) throw py::error_already_set();
  return v;
}

namespace {

PyChipTensor from_array(py::handle obj, std::optional<DataType> dtype) {
  auto lease = std::make_shared<const HostBufferLease>(obj);
  const Py_buffer& v = lease->view();
  const auto itemsize = static_cast<size_t>(v.itemsize);
  if (v.format && v.format[0] && (v.format[0] == '>' || v.format[0] == '!')) {
    throw py::value_error("ChipTensor.from_array: big-endian data; the chip is little-endian");
  }
  // Python object pointers (a numpy object array): a run would overwrite them, and no
  // dtype= makes them numbers.
  if (v.format != nullptr && std::string_view(v.format).find('O') != std::string_view::npos) {
    throw py::type_error(std::string("ChipTensor.from_array: the buffer holds Python objects "
                                     "(format '") +
                         v.format +
                         "'), not numbers; convert it first (e.g. numpy.asarray(x, dtype=...))");
  }
  if (!dtype) {
    dtype = dtype_of_format(v.format, itemsize);
    if (!dtype) {
      throw py::type_error(std::string("ChipTensor.from_array: buffer format '") +
                           (v.format ? v.format : "B") +
                           "' has no DataType; pass dtype= to reinterpret the items");
    }
  } else if (element_size(*dtype) != itemsize) {
    throw py::value_error(std::string("dtype: ") + data_type_name(*dtype) + " has " +
                          std::to_string(element_size(*dtype)) +
                          "-byte elements but the buffer's items are " + std::to_string(itemsize) +
                          " bytes");
  }
  if (v.ndim < 1 || v.ndim > CHIP_TENSOR_MAX_DIMS) {
    throw py::value_error("ndims: the buffer has " + std::to_string(v.ndim) +
                          " dims; ChipTensor needs 1.." + std::to_string(CHIP_TENSOR_MAX_DIMS) +
                          (v.ndim == 0 ? " (reshape a 0-d array to (1,))" : ""));
  }
  std::vector<int64_t> shape(v.shape, v.shape + v.ndim);
  PyChipTensor out;
  out.tensor = make_tensor(reinterpret_cast<uintptr_t>(v.buf), shape, *dtype, AddressSpace::HOST);
  for (int d = 0; d < v.ndim; ++d) {
    const Py_ssize_t stride = v.strides[d];
    if (stride < 0 || stride % v.itemsize != 0) {
      throw py::value_error("strides[" + std::to_string(d) + "]: " + std::to_string(stride) +
                            " bytes is negative or not a multiple of the item size (pass a "
                            "contiguous copy, e.g. numpy.ascontiguousarray)");
    }
    out.tensor.strides[d] = stride / v.itemsize;
  }
  // The buffer is exactly the bytes the (possibly strided) view spans.
  out.tensor.buffer.size = tensor_byte_extent(out.tensor).second;
  validate_tensor(out.tensor);
  out.host = std::move(lease);
  return out;
}

py::tuple dims(const int64_t* values, uint32_t n) {
  py::tuple t(n);
  for (uint32_t i = 0; i < n; ++i) t[i] = values[i];
  return t;
}

PyChipTensor view_of(const PyChipTensor& src, const ChipTensor& t) { return {t, src.host}; }

}  // namespace

void bind_task_interface_tensor(py::module_& m) {
  py::class_<PyChipTensor>(m, "ChipTensor",
                           "A strided tensor descriptor (C ABI ChipTensor). Make one with "
                           "ChipTensor.make (device memory) or ChipTensor.from_array (host).")
      .def_static(
          "make",
          [](py::handle ptr, py::handle shape, py::handle dtype, py::handle buffer_bytes) {
            return PyChipTensor{make_tensor(u64_arg(ptr, "ptr"), ints_arg(shape, "shape"),
                                            data_type_arg(dtype, "dtype"), AddressSpace::DEVICE,
                                            u64_arg(buffer_bytes, "buffer_bytes")),
                                {}};
          },
          py::arg("ptr"), py::arg("shape"), py::arg("dtype"), py::arg("buffer_bytes") = 0,
          "A contiguous row-major DEVICE tensor over [ptr, ptr + buffer_bytes) (0 = exactly "
          "the tensor's bytes). The caller keeps the device memory alive.")
      .def_static(
          "from_array",
          [](py::handle array, py::handle dtype) {
            return from_array(array, dtype.is_none()
                                         ? std::nullopt
                                         : std::optional(data_type_arg(dtype, "dtype")));
          },
          py::arg("array"), py::arg("dtype") = py::none(),
          "A HOST tensor over the memory of a numpy array or any buffer-protocol object "
          "(zero-copy; the tensor keeps the object's buffer alive). dtype= reinterprets "
          "items of the same size, e.g. uint16 data as BFLOAT16.")
      .def(
          "slice",
          [](const PyChipTensor& t, py::handle dim, py::handle start, py::handle stop) {
            return view_of(
                t, tensor_slice(t.tensor,
                                static_cast<uint32_t>(int_arg(dim, "slice: dim", 0, UINT32_MAX)),
                                int_arg(start, "slice: start", 0, INT64_MAX),
                                int_arg(stop, "slice: stop", 0, INT64_MAX)));
          },
          py::arg("dim"), py::arg("start"), py::arg("stop"),
          "Elements [start, stop) of `dim`: a view (start_offset moves, strides stay).")
      .def(
          "reshape",
          [](const PyChipTensor& t, py::handle shape_arg) {
            const std::vector<int64_t> shape = ints_arg(shape_arg, "reshape shape");
            return view_of(t, tensor_reshape(t.tensor, shape));
          },
          py::arg("shape"), "A view with a new shape (contiguous tensors only, same numel).")
      .def(
          "transpose",
          [](const PyChipTensor& t, py::handle dim0, py::handle dim1) {
            return view_of(
                t, tensor_transpose(
                       t.tensor,
                       static_cast<uint32_t>(int_arg(dim0, "transpose: dim0", 0, UINT32_MAX)),
                       static_cast<uint32_t>(int_arg(dim1, "transpose: dim1", 0, UINT32_MAX))));
          },
          py::arg("dim0"), py::arg("dim1"), "A view with two dimensions swapped.")
      .def(
          "validate", [](const PyChipTensor& t) { validate_tensor(t.tensor); },
          "Raise ValueError naming the field if the descriptor is inconsistent.")
      .def_property_readonly(
          "shape", [](const PyChipTensor& t) { return dims(t.tensor.shapes, t.tensor.ndims); })
      .def_property_readonly(
          "strides", [](const PyChipTensor& t) { return dims(t.tensor.strides, t.tensor.ndims); },
          "Strides in elements.")
      .def_property_readonly("ndims", [](const PyChipTensor& t) { return t.tensor.ndims; })
      .def_property_readonly(
          "dtype", [](const PyChipTensor& t) { return static_cast<DataType>(t.tensor.dtype); })
      .def_property_readonly(
          "space", [](const PyChipTensor& t) { return static_cast<AddressSpace>(t.tensor.space); })
      .def_property_readonly("numel", [](const PyChipTensor& t) { return tensor_numel(t.tensor); })
      .def_property_readonly(
          "nbytes",
          [](const PyChipTensor& t) {
            return static_cast<uint64_t>(tensor_numel(t.tensor)) *
                   element_size(static_cast<DataType>(t.tensor.dtype));
          },
          "numel * element size.")
      .def_property_readonly(
          "addr", [](const PyChipTensor& t) { return t.tensor.buffer.addr; },
          "Base address of the underlying buffer.")
      .def_property_readonly(
          "buffer_size", [](const PyChipTensor& t) { return t.tensor.buffer.size; },
          "Bytes of the underlying buffer.")
      .def_property_readonly(
          "start_offset", [](const PyChipTensor& t) { return t.tensor.start_offset; },
          "Offset of the first element, in elements.")
      .def_property_readonly(
          "data_ptr",
          [](const PyChipTensor& t) {
            return t.tensor.buffer.addr + static_cast<uint64_t>(t.tensor.start_offset) *
                                              element_size(static_cast<DataType>(t.tensor.dtype));
          },
          "Address of the first element (addr + start_offset * element size).")
      .def_property_readonly("is_contiguous",
                             [](const PyChipTensor& t) { return tensor_is_contiguous(t.tensor); })
      .def_property_readonly(
          "byte_extent", [](const PyChipTensor& t) { return tensor_byte_extent(t.tensor); },
          "(first, last) bytes touched, relative to addr.")
      .def_property_readonly(
          "readonly", [](const PyChipTensor& t) { return t.host && t.host->readonly(); },
          "True for a HOST tensor over a read-only buffer (usable as input only).")
      .def("__repr__", [](const PyChipTensor& t) {
        std::string shape;
        for (uint32_t i = 0; i < t.tensor.ndims && i < CHIP_TENSOR_MAX_DIMS; ++i) {
          shape += (i ? ", " : "") + std::to_string(t.tensor.shapes[i]);
        }
        const bool dtype_ok = is_valid_data_type(t.tensor.dtype);
        return "ChipTensor(shape=(" + shape + (t.tensor.ndims == 1 ? ",)" : ")") + ", dtype=" +
               (dtype_ok ? data_type_name(static_cast<DataType>(t.tensor.dtype)) : "?") +
               ", space=" + (t.tensor.space == CHIP_SPACE_HOST ? "HOST" : "DEVICE") +
               ", addr=" + std::to_string(t.tensor.buffer.addr) +
               ", start_offset=" + std::to_string(t.tensor.start_offset) + ")";
      });
  auto cls = py::reinterpret_borrow<py::class_<PyChipTensor>>(m.attr("ChipTensor"));
  copy_as_value(cls);
  refuse_pickling(cls,
                  "ChipTensor cannot be pickled or deep-copied: it holds an address in this "
                  "process's host or device memory; copy.copy() copies the descriptor (the "
                  "memory stays shared)");
}

}  // namespace detail
}  // namespace simpler::python
