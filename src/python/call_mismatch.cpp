// call_mismatch.h: the dispatcher wrapper; what did not fit is worked out by
// simpler._typed_call.native_refusal, the analysis the Python layer's own calls use.
#include "call_mismatch.h"

#include <string>

namespace py = pybind11;

namespace simpler::python::detail {
namespace {

// pybind11's dispatcher: one function for every pybind11 function (the record it gets as
// `self` says which). Protected in cpp_function; a derived class may name it.
struct Pybind11 : py::cpp_function {
  using py::cpp_function::dispatcher;
};

// The class a pybind11 function was bound in (its record's scope).
py::handle scope_of(PyObject* record) {
  auto* rec = static_cast<py::detail::function_record*>(
      PyCapsule_GetPointer(record, py::detail::get_function_record_capsule_name()));
  if (rec == nullptr) PyErr_Clear();
  return rec != nullptr ? rec->scope : py::handle();
}

// The failure path: pybind11's plain TypeError (exactly TypeError, not simpler's own typed
// errors) handed to Python, which replaces it when it is a refusal of the call's shape.
PyObject* refuse(PyObject* record, PyObject* args, PyObject* kwargs) {
  if (!PyErr_Occurred()) return nullptr;
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  const py::handle owner = scope_of(record);
  if (type != PyExc_TypeError || !owner) {
    PyErr_Restore(type, value, trace);
    return nullptr;
  }
  PyErr_NormalizeException(&type, &value, &trace);
  try {
    const py::object error =
        py::module_::import("simpler._typed_call")
            .attr("native_refusal")(owner, py::handle(record), py::handle(value), py::handle(args),
                                    kwargs ? py::handle(kwargs) : py::none());
    if (!error.is_none()) {
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(trace);
      return nullptr;
    }
  } catch (py::error_already_set&) {
    // simpler._typed_call missing or failing (a broken install, interpreter shutdown):
    // pybind11's own refusal still says what happened.
  } catch (const std::exception&) {  // nothing may unwind into CPython's C frames
  }
  PyErr_Restore(type, value, trace);
  return nullptr;
}

// Installed as the function's ml_meth: pybind11's dispatcher first, unchanged; the rest
// runs only when it failed.
PyObject* dispatch(PyObject* self, PyObject* args, PyObject* kwargs) {
  PyObject* result = Pybind11::dispatcher(self, args, kwargs);
  return result != nullptr ? result : refuse(self, args, kwargs);
}

// ml_meth's declared type; METH_KEYWORDS says it takes kwargs (CPython's own idiom).
PyCFunction as_ml_meth(PyCFunctionWithKeywords f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

// `function` (a method, static method's function or property setter) dispatched by
// pybind11's dispatcher now goes through `dispatch`.
void translate(py::handle function) {
  PyObject* func = function.ptr();
  if (PyInstanceMethod_Check(func)) func = PyInstanceMethod_GET_FUNCTION(func);
  if (!PyCFunction_Check(func)) return;  // bound in Python: Python refuses by itself
  PyMethodDef* def = reinterpret_cast<PyCFunctionObject*>(func)->m_ml;
  if (def->ml_flags == (METH_VARARGS | METH_KEYWORDS) &&
      def->ml_meth == as_ml_meth(&Pybind11::dispatcher)) {
    def->ml_meth = as_ml_meth(&dispatch);
  }
}

// A read-only property gets a setter that says so (Python's plain AttributeError before).
void refuse_setting(py::handle cls, const std::string& name, py::handle prop) {
  const std::string message =
      std::string(py::str(cls.attr("__name__"))) + "." + name + " is read-only; it cannot be set";
  const py::cpp_function setter(
      [message](py::handle, py::handle) { throw py::attribute_error(message); },
      py::is_method(cls));
  py::setattr(cls, name.c_str(),
              py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(Py_TYPE(prop.ptr())))(
                  prop.attr("fget"), setter, prop.attr("fdel"), prop.attr("__doc__")));
}

// A misspelt attribute, read or set, is a SimplerAttributeError listing the public ones
// (Python's plain AttributeError before). Python probes dunders (numpy's __array__, ...):
// those stay a plain AttributeError, cheap. CallConfig defines its own pair.
void refuse_unknown_attributes(py::handle cls) {
  const py::dict own = cls.attr("__dict__");
  if (own.contains("__getattr__") || own.contains("__setattr__")) return;
  const std::string name = py::str(cls.attr("__name__"));
  std::string listed;
  for (py::handle attr : py::module_::import("builtins").attr("dir")(cls)) {
    const std::string a = py::str(attr);
    if (a[0] != '_') listed += (listed.empty() ? "" : ", ") + a;
  }
  const auto refuse = [name, listed](py::handle attr) {
    const std::string a = py::str(attr);
    if (a.rfind("__", 0) == 0) {
      PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '%s'", name.c_str(),
                   a.c_str());
      throw py::error_already_set();
    }
    throw py::attribute_error(name + " has no attribute '" + a + "' (attributes: " + listed + ")");
  };
  py::setattr(cls, "__getattr__",
              py::cpp_function(
                  [refuse](py::handle, py::handle attr) -> py::object {
                    refuse(attr);  // throws
                    return {};
                  },
                  py::is_method(cls)));
  py::setattr(
      cls, "__setattr__",
      py::cpp_function(
          [refuse](py::handle self, py::handle attr, py::handle value) {
            if (PyObject_GenericSetAttr(self.ptr(), attr.ptr(), value.ptr()) == 0) return;
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
              throw py::error_already_set();
            }
            const py::error_already_set error;  // taken before HasAttr clears it
            // A known attribute's own refusal (a setter's) stands.
            if (PyObject_HasAttr(reinterpret_cast<PyObject*>(Py_TYPE(self.ptr())), attr.ptr())) {
              throw error;
            }
            refuse(attr);
          },
          py::is_method(cls)));
}

}  // namespace

void translate_call_mismatches(py::handle cls, const char* no_constructor) {
  const py::dict members = cls.attr("__dict__").attr("copy")();
  for (auto item : members) {
    const std::string name = py::str(item.first);
    const py::handle member = item.second;
    // Operators keep NotImplemented; pybind11's own (static) properties stay as they are.
    if (name != "__init__" && name[0] == '_') continue;
    if (PyObject_TypeCheck(member.ptr(), &PyProperty_Type)) {
      if (member.attr("fset").is_none()) {
        refuse_setting(cls, name, member);
      } else {
        translate(member.attr("fset"));
      }
      continue;
    }
    translate(PyObject_TypeCheck(member.ptr(), &PyStaticMethod_Type) != 0
                  ? member.attr("__func__")
                  : py::reinterpret_borrow<py::object>(member));
  }
  refuse_unknown_attributes(cls);
  // No py::init: __init__ is the slot wrapper of pybind11's "No constructor defined!".
  const bool has_init =
      members.contains("__init__") && PyInstanceMethod_Check(members["__init__"].ptr());
  if (no_constructor != nullptr && !has_init) {
    const std::string message =
        std::string(py::str(cls.attr("__name__"))) + "(): " + no_constructor;
    py::cpp_function init(
        [message](const py::args&, const py::kwargs&) -> py::object {
          throw py::type_error(message);
        },
        py::name("__init__"), py::is_method(cls));
    py::setattr(cls, "__init__", init);
  }
}

}  // namespace simpler::python::detail
