// ChipStorageTaskArgs: tensors then scalars, packed by the C++ rules; host tensors' memory
// is kept alive by the args object.
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "process_local.h"
#include "task_interface_types.h"

namespace py = pybind11;

namespace simpler::python::detail {
namespace {

// A Python int (or anything with __index__, not a bool: as add_scalar_i64/u64) as a 64-bit
// pattern: 0..2**64-1 as unsigned, -2**63..-1 as two's complement.
uint64_t scalar_bits(py::handle value, const char* what) {
  if (PyFloat_Check(value.ptr())) {
    throw py::type_error(std::string(what) +
                         ": expected an int; use add_scalar_f32/add_scalar_f64 for floats");
  }
  const py::object index = index_of(value, what);
  const unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
  if (!PyErr_Occurred()) return u;
  PyErr_Clear();
  const long long s = PyLong_AsLongLong(index.ptr());
  if (!PyErr_Occurred()) return static_cast<uint64_t>(s);
  PyErr_Clear();
  throw py::value_error(std::string(what) + ": " + py::str(index).cast<std::string>() +
                        " does not fit 64 bits (-2**63..2**64-1)");
}

// An index as tensor()/scalar() take it: an int (typed refusal otherwise), IndexError
// (SimplerIndexError, bind_errors.cpp) outside 0..count-1, a negative one included.
size_t checked_index(py::handle index, uint32_t count, const char* what) {
  const int64_t i = int_arg(index, what, INT64_MIN, INT64_MAX);
  if (i < 0 || i >= static_cast<int64_t>(count)) {
    throw py::index_error(std::string(what) + ": index " + std::to_string(i) +
                          " out of range (count " + std::to_string(count) + ")");
  }
  return static_cast<size_t>(i);
}

}  // namespace

void bind_task_interface_args(py::module_& m) {
  py::class_<PyChipStorageTaskArgs>(m, "ChipStorageTaskArgs",
                                    "Arguments of one call: tensors first, then scalars "
                                    "(64-bit patterns). Keeps host tensors' memory alive.")
      .def(py::init<>())
      .def(
          "add_tensor",
          [](PyChipStorageTaskArgs& a, py::handle tensor) {
            if (!py::isinstance<PyChipTensor>(tensor)) {
              throw py::type_error(std::string("add_tensor: expected a ChipTensor, got ") +
                                   Py_TYPE(tensor.ptr())->tp_name);
            }
            const auto& t = tensor.cast<const PyChipTensor&>();
            args_add_tensor(a.args, t.tensor);  // throws, leaving `a` unchanged
            a.host.resize(a.args.tensor_count - 1);
            a.host.push_back(t.host);
          },
          py::arg("tensor"),
          "Append a tensor. ValueError after a scalar, past capacity or for an invalid tensor.")
      .def(
          "add_scalar",
          [](PyChipStorageTaskArgs& a, py::handle value) {
            args_add_scalar(a.args, scalar_bits(value, "add_scalar"));
          },
          py::arg("value"), "Append an int as a 64-bit pattern (negative: two's complement).")
      .def(
          "add_scalar_i64",
          [](PyChipStorageTaskArgs& a, py::handle value) {
            const int64_t v = int_arg(value, "add_scalar_i64", INT64_MIN, INT64_MAX);
            args_add_scalar(a.args, scalar_bits_from_i64(v));
          },
          py::arg("value"))
      .def(
          "add_scalar_u64",
          [](PyChipStorageTaskArgs& a, py::handle value) {
            args_add_scalar(a.args, u64_arg(value, "add_scalar_u64"));
          },
          py::arg("value"))
      .def(
          "add_scalar_f32",
          [](PyChipStorageTaskArgs& a, py::handle value) {
            const auto v = static_cast<float>(float_arg(value, "add_scalar_f32"));
            args_add_scalar(a.args, scalar_bits_from_f32(v));
          },
          py::arg("value"), "Append a float as IEEE single in the low 32 bits.")
      .def(
          "add_scalar_f64",
          [](PyChipStorageTaskArgs& a, py::handle value) {
            args_add_scalar(a.args, scalar_bits_from_f64(float_arg(value, "add_scalar_f64")));
          },
          py::arg("value"), "Append a float as IEEE double.")
      .def("clear",
           [](PyChipStorageTaskArgs& a) {
             a.args = ChipStorageTaskArgs{};
             a.host.clear();
           })
      .def("__len__",
           [](const PyChipStorageTaskArgs& a) { return a.args.tensor_count + a.args.scalar_count; })
      .def_property_readonly("tensor_count",
                             [](const PyChipStorageTaskArgs& a) { return a.args.tensor_count; })
      .def_property_readonly("scalar_count",
                             [](const PyChipStorageTaskArgs& a) { return a.args.scalar_count; })
      .def(
          "tensor",
          [](const PyChipStorageTaskArgs& a, py::handle index) {
            const size_t i = checked_index(index, a.args.tensor_count, "tensor");
            return PyChipTensor{a.args.tensors[i], i < a.host.size() ? a.host[i] : nullptr};
          },
          py::arg("index"))
      .def(
          "scalar",
          [](const PyChipStorageTaskArgs& a, py::handle index) {
            const size_t i = checked_index(index, a.args.scalar_count, "scalar");
            return a.args.scalars[i];
          },
          py::arg("index"), "The i-th scalar's 64-bit pattern (unsigned).")
      .def_property_readonly("scalars",
                             [](const PyChipStorageTaskArgs& a) {
                               return std::vector<uint64_t>(a.args.scalars,
                                                            a.args.scalars + a.args.scalar_count);
                             })
      .def("__repr__", [](const PyChipStorageTaskArgs& a) {
        return "ChipStorageTaskArgs(tensors=" + std::to_string(a.args.tensor_count) +
               ", scalars=" + std::to_string(a.args.scalar_count) + ")";
      });
  auto cls =
      py::reinterpret_borrow<py::class_<PyChipStorageTaskArgs>>(m.attr("ChipStorageTaskArgs"));
  copy_as_value(cls);
  refuse_pickling(cls,
                  "ChipStorageTaskArgs cannot be pickled or deep-copied: its tensors hold "
                  "addresses in this process's memory; copy.copy() copies the arguments (the "
                  "memory stays shared)");
}

}  // namespace simpler::python::detail
