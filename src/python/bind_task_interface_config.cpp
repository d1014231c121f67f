// CallConfig: keyword constructor and attributes with type/range checks naming the field;
// validate() applies the C++ rules (ValueError).
#include <array>
#include <limits>
#include <string>

#include "task_interface_types.h"

namespace py = pybind11;

namespace simpler::python::detail {
namespace {

std::string field_name(const char* field) { return std::string("CallConfig.") + field; }

// Python's bool or numpy's (a flag computed with numpy, e.g. array.any()); not an int.
bool to_bool(py::handle v, const char* field) {
  if (PyBool_Check(v.ptr())) return v.ptr() == Py_True;
  if (is_bool(v)) return PyObject_IsTrue(v.ptr()) == 1;
  throw py::type_error(field_name(field) + ": expected a bool, got " + Py_TYPE(v.ptr())->tp_name);
}

template <typename T>
T to_int(py::handle v, const char* field) {
  const py::object index = index_of(v, field_name(field).c_str());  // bool and float refused
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  const std::string range = std::to_string(std::numeric_limits<T>::min()) + ".." +
                            std::to_string(std::numeric_limits<T>::max());
  if (overflow == 0) {
    if (s >= static_cast<long long>(std::numeric_limits<T>::min()) &&
        (s < 0 || static_cast<unsigned long long>(s) <= std::numeric_limits<T>::max())) {
      return static_cast<T>(s);
    }
  } else if (overflow > 0 && !std::numeric_limits<T>::is_signed) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
    if (!PyErr_Occurred() && u <= std::numeric_limits<T>::max()) return static_cast<T>(u);
    PyErr_Clear();
  }
  throw py::value_error(field_name(field) + ": " + py::str(index).cast<std::string>() +
                        " is out of range (" + range + ")");
}

std::string to_path(py::handle v, const char* field) {
  py::object s = py::module_::import("os").attr("fspath");
  if (!PyUnicode_Check(v.ptr()) && !py::hasattr(v, "__fspath__")) {
    throw py::type_error(field_name(field) + ": expected a str or path, got " +
                         Py_TYPE(v.ptr())->tp_name);
  }
  py::object path = s(v);
  if (!PyUnicode_Check(path.ptr())) {
    throw py::type_error(field_name(field) + ": expected a str path, got bytes");
  }
  return path.cast<std::string>();
}

struct Field {
  const char* name;
  py::object (*get)(const CallConfig&);
  void (*set)(CallConfig&, py::handle);
};

#define SIMPLER_BOOL_FIELD(f)                                                                     \
  Field {                                                                                         \
#f, [](const CallConfig& c)                                                                   \
             -> py::object { return py::bool_(c.f); }, [](CallConfig & c,                         \
                                                          py::handle v) { c.f = to_bool(v, #f); } \
  }
#define SIMPLER_INT_FIELD(f)                                                                      \
  Field {                                                                                         \
#f, [](const CallConfig& c)                                                                   \
             -> py::                                                                              \
                 object { return py::int_(c.f); },                                                \
                                                [](CallConfig & c,                                \
                                                   py::handle                                     \
                                                       v) { c.f = to_int<decltype(c.f)>(v, #f); } \
  }

const std::array<Field, 12> kFields = {
    SIMPLER_BOOL_FIELD(enable_swimlane),
    SIMPLER_BOOL_FIELD(dump_args),
    SIMPLER_BOOL_FIELD(dump_dep_graph),
    SIMPLER_BOOL_FIELD(enable_profiling),
    Field{"output_prefix",
          [](const CallConfig& c) -> py::object { return py::str(c.output_prefix); },
          [](CallConfig& c, py::handle v) { c.output_prefix = to_path(v, "output_prefix"); }},
    SIMPLER_INT_FIELD(aicpu_thread_num),
    SIMPLER_INT_FIELD(task_window_size),
    SIMPLER_INT_FIELD(heap_ring_bytes),
    SIMPLER_INT_FIELD(dep_pool_size),
    SIMPLER_INT_FIELD(tensormap_capacity),
    SIMPLER_INT_FIELD(watchdog_timeout_ms),
    SIMPLER_INT_FIELD(pipeline_depth),
};
#undef SIMPLER_BOOL_FIELD
#undef SIMPLER_INT_FIELD

std::string field_list() {
  std::string out;
  for (const Field& f : kFields) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

const Field* find_field(const std::string& name) {
  for (const Field& f : kFields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

// Translated to simpler.errors.SimplerAttributeError (bind_errors.cpp).
py::attribute_error unknown_attribute(const std::string& name) {
  return py::attribute_error("CallConfig has no field '" + name + "' (fields: " + field_list() +
                             ")");
}

py::dict to_dict(const CallConfig& c) {
  py::dict d;
  for (const Field& f : kFields) d[f.name] = f.get(c);
  return d;
}

}  // namespace

void bind_task_interface_config(py::module_& m) {
  py::class_<CallConfig> cls(
      m, "CallConfig",
      "Run/context configuration: diagnostics switches (enable_swimlane, dump_args, "
      "dump_dep_graph, enable_profiling) with the output_prefix they write to, "
      "aicpu_thread_num, ring sizes (task_window_size, heap_ring_bytes, dep_pool_size, "
      "tensormap_capacity), watchdog_timeout_ms and pipeline_depth (program mode: runs in "
      "flight at once, 1..8). 0 means 'default' for every number (for watchdog_timeout_ms: no "
      "watchdog, see docs/faults.md; for pipeline_depth: 1, no pipelining, see docs/api.md).");
  cls.def(
      py::init([](const py::args& args, const py::kwargs& kwargs) {
        if (!args.empty()) {
          throw py::type_error("CallConfig: takes keyword arguments only (fields: " + field_list() +
                               "), got " + std::to_string(args.size()) + " positional");
        }
        CallConfig c;
        for (auto [key, value] : kwargs) {
          const auto name = key.cast<std::string>();
          const Field* field = find_field(name);
          if (!field) {
            throw py::type_error("CallConfig: unknown field '" + name +
                                 "' (fields: " + field_list() + ")");
          }
          field->set(c, value);
        }
        return c;
      }),
      "CallConfig(**fields): keyword arguments only; unset fields keep their defaults.");
  for (const Field& f : kFields) {
    cls.def_property(
        f.name, [get = f.get](const CallConfig& c) { return get(c); },
        [set = f.set](CallConfig& c, py::handle v) { set(c, v); });
  }
  // A misspelt field would otherwise be a plain AttributeError (no instance dict: nothing
  // is stored); SimplerAttributeError is still an AttributeError, so hasattr() works.
  cls.def("__setattr__", [](py::handle self, const std::string& name, py::handle value) {
    const Field* field = find_field(name);
    if (!field) throw unknown_attribute(name);
    field->set(self.cast<CallConfig&>(), value);
  });
  cls.def("__getattr__", [](py::handle, const std::string& name) -> py::object {
    throw unknown_attribute(name);  // called only when normal lookup failed
  });
  cls.def("validate", &CallConfig::validate,
          "Raise ValueError naming the field and its allowed values if the config is inconsistent.")
      .def("to_dict", &to_dict, "The fields as a dict.")
      .def("copy", [](const CallConfig& c) { return c; })
      .def(py::pickle(&to_dict,  // also copy.copy / copy.deepcopy
                      [](const py::dict& fields) {
                        CallConfig c;
                        for (auto [key, value] : fields) {
                          const Field* field = find_field(key.cast<std::string>());
                          if (!field) throw unknown_attribute(key.cast<std::string>());
                          field->set(c, value);
                        }
                        return c;
                      }))
      .def(
          "__eq__",
          [](const CallConfig& a, const CallConfig& b) { return to_dict(a).equal(to_dict(b)); },
          py::is_operator())
      .def("__repr__", [](const CallConfig& c) {
        std::string out = "CallConfig(";
        bool first = true;
        for (const Field& f : kFields) {
          out += (first ? "" : ", ") + std::string(f.name) + "=" +
                 py::repr(f.get(c)).cast<std::string>();
          first = false;
        }
        return out + ")";
      });
}

}  // namespace simpler::python::detail
