// CoreCallable / ChipCallable: build from Python values, load from bytes, accessors.
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "support/counted.h"
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
  const py::object index = index_of(v, field.c_str());  // bool and float refused
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) throw py::value_error(field + ": out of range");
  return value;
}

ArgDirection to_direction(py::handle item, const std::string& field) {
  if (py::isinstance<ArgDirection>(item)) return item.cast<ArgDirection>();
  const int64_t raw = to_int64(item, field);
  if (raw < 0 || raw > CHIP_ARG_INOUT) {
    throw py::value_error(field + ": " + std::to_string(raw) +
                          " is not an ArgDirection (SCALAR=0, IN=1, OUT=2, INOUT=3)");
  }
  return static_cast<ArgDirection>(raw);
}

// None -> any; a DataType; or anything numpy.dtype() accepts (np.float32, "float32").
std::optional<DataType> to_dtype(py::handle item, const std::string& field) {
  if (item.is_none()) return std::nullopt;
  if (py::isinstance<DataType>(item)) return item.cast<DataType>();
  try {
    py::object data_type = py::module_::import("simpler._native.task_interface").attr("DataType");
    return data_type.attr("from_numpy")(item).cast<DataType>();
  } catch (py::error_already_set&) {
    throw py::type_error(field + ": expected a DataType (or a numpy dtype), got " +
                         std::string(py::str(py::repr(item))));
  }
}

uint32_t to_rank(py::handle item, const std::string& field) {
  const int64_t rank = to_int64(item, field);
  if (rank < 0 || rank > CHIP_TENSOR_MAX_DIMS) {
    throw py::value_error(field + ": " + std::to_string(rank) + " is out of range (0 = any, 1.." +
                          std::to_string(CHIP_TENSOR_MAX_DIMS) + ")");
  }
  return static_cast<uint32_t>(rank);
}

// ArgSpec(direction, dtype=None, rank=0); a scalar has no rank (refused here as by build()).
ArgSpec arg_spec(py::handle direction, py::handle dtype, py::handle rank) {
  ArgSpec spec{to_direction(direction, "direction"), to_dtype(dtype, "dtype"),
               to_rank(rank, "rank")};
  if (spec.direction == ArgDirection::SCALAR && spec.rank != 0) {
    throw py::value_error("rank: " + std::to_string(spec.rank) +
                          " given for a SCALAR (scalars have no rank)");
  }
  return spec;
}

// A signature entry: ArgDirection (or its int), ArgSpec, or (direction, dtype[, rank]).
ArgSpec to_arg_spec(py::handle item, const std::string& field) {
  if (py::isinstance<ArgSpec>(item)) return item.cast<ArgSpec>();
  if (PyTuple_Check(item.ptr()) || PyList_Check(item.ptr())) {
    const auto parts = py::reinterpret_borrow<py::sequence>(item);
    if (parts.size() < 1 || parts.size() > 3) {
      throw py::type_error(field +
                           ": expected (direction, dtype) or (direction, dtype, rank), "
                           "got a sequence of " +
                           std::to_string(parts.size()));
    }
    ArgSpec spec{to_direction(parts[0], field + ".direction"), std::nullopt, 0};
    if (parts.size() > 1) spec.dtype = to_dtype(parts[1], field + ".dtype");
    if (parts.size() > 2) spec.rank = to_rank(parts[2], field + ".rank");
    return spec;
  }
  return ArgSpec{to_direction(item, field), std::nullopt, 0};
}

std::vector<ArgSpec> to_signature(py::handle seq) {
  if (PyUnicode_Check(seq.ptr()) || !PySequence_Check(seq.ptr())) {
    throw py::type_error(std::string("signature: expected a sequence of ArgDirection, ") +
                         "(ArgDirection, DataType[, rank]) or ArgSpec, got " +
                         Py_TYPE(seq.ptr())->tp_name);
  }
  std::vector<ArgSpec> out;
  const auto items = py::reinterpret_borrow<py::sequence>(seq);
  for (size_t i = 0; i < items.size(); ++i) {
    out.push_back(to_arg_spec(items[i], "signature[" + std::to_string(i) + "]"));
  }
  return out;
}

std::optional<CoreType> to_core_type(py::handle core_type, py::handle binary) {
  py::object value = py::reinterpret_borrow<py::object>(core_type);
  if (value.is_none() && py::hasattr(binary, "core_type")) value = binary.attr("core_type");
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(value)) {
    throw py::type_error("core_type: expected 'aic', 'aiv', 'mix' or None, got " +
                         std::string(Py_TYPE(value.ptr())->tp_name));
  }
  const std::string name = value.cast<std::string>();
  if (auto core = core_type_from_name(name)) return *core;
  throw py::value_error(
      "core_type: expected 'aic' (cube), 'aiv' (vector) or 'mix' (a cluster "
      "task kernel: cube and vector cores together), got '" +
      name + "'");
}

py::object core_type_value(std::optional<CoreType> core) {
  if (!core) return py::none();
  return py::str(core_type_name(*core));
}

py::list arg_spec_list(std::span<const uint8_t> signature, std::span<const uint8_t> arg_types) {
  py::list out;
  for (const ArgSpec& spec : arg_specs_of(signature, arg_types)) out.append(spec);
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

// What CoreCallable and ChipCallable share: both are a validated image with a signature.
template <typename T>
void def_image_methods(py::class_<T>& cls) {
  cls.def_static(
         "from_bytes",
         [](py::handle data) {
           const ByteView bytes(data, "image");
           return T::from_bytes(bytes.bytes());
         },
         py::arg("image"), "Load (and fully validate) an image made by bytes().")
      .def(
          "bytes", [](const T& c) { return to_bytes(c.bytes()); }, "The image.")
      .def("__bytes__", [](const T& c) { return to_bytes(c.bytes()); })
      .def(
          "__len__", [](const T& c) { return c.bytes().size(); }, "Image size in bytes.")
      .def_property_readonly("signature",
                             [](const T& c) { return signature_list(c.view().signature); })
      .def_property_readonly("arg_specs",
                             [](const T& c) {
                               const auto v = c.view();
                               return arg_spec_list(v.signature, v.arg_types);
                             })
      .def_property_readonly("binary", [](const T& c) { return to_bytes(c.view().binary); })
      .def("__eq__", &same_image<T>, py::is_operator())
      .def(
          py::pickle([](const T& c) { return to_bytes(c.bytes()); },
                     [](const py::bytes& b) {
                       const std::string s = b;
                       return T::from_bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
                     }));
}

}  // namespace

void bind_arg_spec(py::module_& m) {
  py::class_<ArgSpec>(m, "ArgSpec",
                      "One signature entry: a direction and, optionally, the dtype (and rank) "
                      "the kernel expects there. Untyped entries accept anything of their kind.")
      .def(py::init(&arg_spec), py::arg("direction"), py::arg("dtype") = py::none(),
           py::arg("rank") = 0)
      .def_readonly("direction", &ArgSpec::direction)
      .def_property_readonly("dtype",
                             [](const ArgSpec& s) -> py::object {
                               if (!s.dtype) return py::none();
                               return py::cast(*s.dtype);
                             })
      .def_readonly("rank", &ArgSpec::rank, "Tensor rank the kernel expects; 0 = any.")
      .def_property_readonly("typed", &ArgSpec::typed)
      .def("__eq__",
           [](const ArgSpec& a, py::handle other) {
             if (!py::isinstance<ArgSpec>(other)) return false;
             const ArgSpec& b = other.cast<const ArgSpec&>();
             return a.direction == b.direction && a.dtype == b.dtype && a.rank == b.rank;
           })
      .def("__hash__",
           [](const ArgSpec& s) {
             return py::hash(py::make_tuple(static_cast<int>(s.direction),
                                            s.dtype ? static_cast<int>(*s.dtype) : -1, s.rank));
           })
      .def(py::pickle(  // also copy.copy / copy.deepcopy: a value
          [](const ArgSpec& s) {
            return py::make_tuple(s.direction, s.dtype ? py::cast(*s.dtype) : py::none(), s.rank);
          },
          [](const py::tuple& state) {
            if (state.size() != 3) throw py::value_error("ArgSpec: not a pickled ArgSpec");
            return arg_spec(state[0], state[1], state[2]);
          }))
      .def("__repr__", [](const ArgSpec& s) {
        std::string r = std::string("ArgSpec(ArgDirection.") + arg_direction_name(s.direction);
        if (s.dtype) r += std::string(", DataType.") + data_type_name(*s.dtype);
        if (s.rank != 0) r += ", rank=" + std::to_string(s.rank);
        return r + ")";
      });
}

void bind_task_interface_callables(py::module_& m) {
  bind_arg_spec(m);
  py::class_<CoreCallable> core_class(
      m, "CoreCallable",
      "One kernel: a signature (ArgDirection per argument) and its "
      "compiled binary, as a flat position-independent byte image.");
  def_image_methods(core_class);
  core_class
      .def_static(
          "build",
          [](py::handle signature, py::handle binary, py::handle core_type) {
            const std::vector<ArgSpec> sig = to_signature(signature);
            const std::optional<CoreType> core = to_core_type(core_type, binary);
            const ByteView bin(binary, "binary");
            return CoreCallable::build(sig, bin.bytes(), core);
          },
          py::arg("signature"), py::arg("binary"), py::arg("core_type") = py::none(),
          "Build the image. Signature entries: ArgDirection, (ArgDirection, DataType[, rank]) "
          "or ArgSpec. core_type 'aic'/'aiv'/'mix' (default: binary.core_type when the binary came "
          "from KernelCompiler.compile_kernel, else not recorded). ValueError/TypeError naming "
          "the field on bad input.")
      .def_property_readonly(
          "core_type", [](const CoreCallable& c) { return core_type_value(c.view().core_type); },
          "'aic', 'aiv' or 'mix' (a cluster task kernel): the core the kernel was compiled for; "
          "None when not recorded.")
      .def("__repr__", [](const CoreCallable& c) {
        const auto v = c.view();
        return "CoreCallable(signature=" + support::counted(v.signature.size(), "arg") +
               ", binary=" + support::counted(v.binary.size(), "byte") +
               (v.core_type ? std::string(", core_type='") + core_type_name(*v.core_type) + "'"
                            : std::string()) +
               ")";
      });

  py::class_<ChipCallable> chip_class(
      m, "ChipCallable",
      "An orchestration binary (entry symbol func_name) plus its kernels, "
      "as a flat position-independent byte image.");
  def_image_methods(chip_class);
  chip_class
      .def_static(
          "build",
          [](py::handle signature, const std::string& func_name, py::handle binary,
             py::handle children) {
            const std::vector<ArgSpec> sig = to_signature(signature);
            const ByteView bin(binary, "binary");
            return ChipCallable::build(sig, func_name, bin.bytes(), to_children(children));
          },
          py::arg("signature"), py::arg("func_name"), py::arg("binary"),
          py::arg("children") = py::tuple(),
          "Build the image; children is a sequence of (func_id, CoreCallable), func ids "
          "0..CHIP_MAX_FUNC_ID, each at most once.")
      .def_property_readonly("func_name", &ChipCallable::func_name)
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
      .def("__repr__", [](const ChipCallable& c) {
        const auto v = c.view();
        return "ChipCallable(func_name='" + std::string(v.func_name) +
               "', signature=" + support::counted(v.signature.size(), "arg") +
               ", binary=" + support::counted(v.binary.size(), "byte") +
               ", children=" + std::to_string(v.children.size()) + ")";
      });
}

}  // namespace simpler::python::detail
