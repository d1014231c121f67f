// CoreCallable / ChipCallable: build from Python values, load from bytes, accessors.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "task_interface_types.h"

namespace py = pybind11;

namespace simpler::python::detail {
namespace {

// A C-contiguous byte export of a bytes-like object, released on scope exit.
class ByteView {
 public:
  ByteView(py::handle obj, const char* field) {
    if (PyUnicode_Check(obj.ptr()) ||
        PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      throw py::type_error(std::string(field) + ": expected a bytes-like object, got " +
                           Py_TYPE(obj.ptr())->tp_name);
    }
  }
  ~ByteView() { PyBuffer_Release(&view_); }
  ByteView(const ByteView&) = delete;
  ByteView& operator=(const ByteView&) = delete;
  std::span<const uint8_t> bytes() const {
    return {static_cast<const uint8_t*>(view_.buf), static_cast<size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

int64_t to_int64(py::handle v, const std::string& field) {
  if (PyBool_Check(v.ptr()) || PyFloat_Check(v.ptr())) {
    throw py::type_error(field + ": expected an int, got " + Py_TYPE(v.ptr())->tp_name);
  }
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!index) {
    PyErr_Clear();
    throw py::type_error(field + ": expected an int, got " + Py_TYPE(v.ptr())->tp_name);
  }
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) throw py::value_error(field + ": out of range");
  return value;
}

std::vector<ArgDirection> to_signature(py::handle seq) {
  if (PyUnicode_Check(seq.ptr()) || !PySequence_Check(seq.ptr())) {
    throw py::type_error(std::string("signature: expected a sequence of ArgDirection, got ") +
                         Py_TYPE(seq.ptr())->tp_name);
  }
  std::vector<ArgDirection> out;
  const auto items = py::reinterpret_borrow<py::sequence>(seq);
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string field = "signature[" + std::to_string(i) + "]";
    py::object item = items[i];
    if (py::isinstance<ArgDirection>(item)) {
      out.push_back(item.cast<ArgDirection>());
      continue;
    }
    const int64_t raw = to_int64(item, field);
    if (raw < 0 || raw > CHIP_ARG_INOUT) {
      throw py::value_error(field + ": " + std::to_string(raw) +
                            " is not an ArgDirection (SCALAR=0, IN=1, OUT=2, INOUT=3)");
    }
    out.push_back(static_cast<ArgDirection>(raw));
  }
  return out;
}

std::vector<std::pair<int32_t, CoreCallable>> to_children(py::handle seq) {
  std::vector<std::pair<int32_t, CoreCallable>> out;
  size_t i = 0;
  for (py::handle item : py::iter(seq)) {
    const std::string field = "children[" + std::to_string(i++) + "]";
    if (!PySequence_Check(item.ptr()) || PySequence_Size(item.ptr()) != 2) {
      PyErr_Clear();
      throw py::type_error(field + ": expected a (func_id, CoreCallable) pair");
    }
    const auto pair = py::reinterpret_borrow<py::sequence>(item);
    const int64_t func_id = to_int64(pair[0], field + ".func_id");
    if (func_id < 0 || func_id > CHIP_MAX_FUNC_ID) {
      throw py::value_error(field + ".func_id: " + std::to_string(func_id) +
                            " is out of range (0.." + std::to_string(CHIP_MAX_FUNC_ID) + ")");
    }
    py::object callable = pair[1];
    if (!py::isinstance<CoreCallable>(callable)) {
      throw py::type_error(field + ": expected a CoreCallable, got " +
                           Py_TYPE(callable.ptr())->tp_name);
    }
    out.emplace_back(static_cast<int32_t>(func_id), callable.cast<const CoreCallable&>());
  }
  return out;
}

py::bytes to_bytes(std::span<const uint8_t> s) {
  return py::bytes(reinterpret_cast<const char*>(s.data()), s.size());
}

py::list signature_list(std::span<const uint8_t> s) {
  py::list out;
  for (uint8_t b : s) out.append(static_cast<ArgDirection>(b));
  return out;
}

template <typename T>
bool same_image(const T& a, const T& b) {
  return std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin(), b.bytes().end());
}

}  // namespace

void bind_task_interface_callables(py::module_& m) {
  py::class_<CoreCallable>(m, "CoreCallable",
                           "One kernel: a signature (ArgDirection per argument) and its "
                           "compiled binary, as a flat position-independent byte image.")
      .def_static(
          "build",
          [](py::handle signature, py::handle binary) {
            const std::vector<ArgDirection> sig = to_signature(signature);
            const ByteView bin(binary, "binary");
            return CoreCallable::build(sig, bin.bytes());
          },
          py::arg("signature"), py::arg("binary"),
          "Build the image. ValueError/TypeError naming the field on bad input.")
      .def_static(
          "from_bytes",
          [](py::handle data) {
            const ByteView bytes(data, "image");
            return CoreCallable::from_bytes(bytes.bytes());
          },
          py::arg("image"), "Load (and fully validate) an image made by bytes().")
      .def(
          "bytes", [](const CoreCallable& c) { return to_bytes(c.bytes()); }, "The image.")
      .def("__bytes__", [](const CoreCallable& c) { return to_bytes(c.bytes()); })
      .def(
          "__len__", [](const CoreCallable& c) { return c.bytes().size(); }, "Image size in bytes.")
      .def_property_readonly(
          "signature", [](const CoreCallable& c) { return signature_list(c.view().signature); })
      .def_property_readonly("binary",
                             [](const CoreCallable& c) { return to_bytes(c.view().binary); })
      .def("__eq__", &same_image<CoreCallable>, py::is_operator())
      .def(py::pickle(
          [](const CoreCallable& c) { return to_bytes(c.bytes()); },
          [](const py::bytes& b) {
            const std::string s = b;
            return CoreCallable::from_bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
          }))
      .def("__repr__", [](const CoreCallable& c) {
        const auto v = c.view();
        return "CoreCallable(signature=" + std::to_string(v.signature.size()) +
               " args, binary=" + std::to_string(v.binary.size()) + " bytes)";
      });

  py::class_<ChipCallable>(m, "ChipCallable",
                           "An orchestration binary (entry symbol func_name) plus its kernels, "
                           "as a flat position-independent byte image.")
      .def_static(
          "build",
          [](py::handle signature, const std::string& func_name, py::handle binary,
             py::handle children) {
            const std::vector<ArgDirection> sig = to_signature(signature);
            const ByteView bin(binary, "binary");
            return ChipCallable::build(sig, func_name, bin.bytes(), to_children(children));
          },
          py::arg("signature"), py::arg("func_name"), py::arg("binary"),
          py::arg("children") = py::tuple(),
          "Build the image; children is a sequence of (func_id, CoreCallable), func ids "
          "0..CHIP_MAX_FUNC_ID, each at most once.")
      .def_static(
          "from_bytes",
          [](py::handle data) {
            const ByteView bytes(data, "image");
            return ChipCallable::from_bytes(bytes.bytes());
          },
          py::arg("image"), "Load (and fully validate) an image made by bytes().")
      .def(
          "bytes", [](const ChipCallable& c) { return to_bytes(c.bytes()); }, "The image.")
      .def("__bytes__", [](const ChipCallable& c) { return to_bytes(c.bytes()); })
      .def(
          "__len__", [](const ChipCallable& c) { return c.bytes().size(); }, "Image size in bytes.")
      .def_property_readonly(
          "signature", [](const ChipCallable& c) { return signature_list(c.view().signature); })
      .def_property_readonly("func_name", &ChipCallable::func_name)
      .def_property_readonly("binary",
                             [](const ChipCallable& c) { return to_bytes(c.view().binary); })
      .def_property_readonly(
          "children",
          [](const ChipCallable& c) {
            py::list out;
            for (const auto& child : c.view().children) {
              out.append(py::make_tuple(child.func_id, CoreCallable::from_bytes(child.image)));
            }
            return out;
          },
          "[(func_id, CoreCallable), ...] sorted by func_id.")
      .def_property_readonly("func_ids",
                             [](const ChipCallable& c) {
                               std::vector<int32_t> ids;
                               for (const auto& child : c.view().children)
                                 ids.push_back(child.func_id);
                               return ids;
                             })
      .def("__eq__", &same_image<ChipCallable>, py::is_operator())
      .def(py::pickle(
          [](const ChipCallable& c) { return to_bytes(c.bytes()); },
          [](const py::bytes& b) {
            const std::string s = b;
            return ChipCallable::from_bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
          }))
      .def("__repr__", [](const ChipCallable& c) {
        const auto v = c.view();
        return "ChipCallable(func_name='" + std::string(v.func_name) +
               "', signature=" + std::to_string(v.signature.size()) +
               " args, binary=" + std::to_string(v.binary.size()) +
               " bytes, children=" + std::to_string(v.children.size()) + ")";
      });
}

}  // namespace simpler::python::detail
