// call_mismatch.h: each function's signature is read once, at import, from the line
// pybind11 wrote at the top of its docstring; a refused call is analysed against it.
#include "call_mismatch.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace simpler::python::detail {
namespace {

struct Param {
  std::string name;
  std::string type;          // as pybind11 wrote it: "handle", "str", "int", ...
  std::string default_text;  // empty: required
};

struct Signature {
  std::string cls;   // "ChipTensor"
  std::string name;  // "make"
  bool is_method = false;
  std::vector<Param> params;     // without self
  size_t positional = SIZE_MAX;  // how many may be given by position (before a bare '*')
  py::object owner;              // the class

  std::string qualified() const {
    return name == "__init__" ? cls + "()" : cls + "." + name + "()";
  }
  std::string shown() const {
    std::string out = (name == "__init__" ? cls : name) + "(";
    for (size_t i = 0; i < params.size(); ++i) {
      const Param& p = params[i];
      out += (i ? ", " : "") + std::string(i == positional ? "*, " : "") + p.name;
      if (p.type != "handle" && p.type != "object") out += ": " + p.type;
      if (!p.default_text.empty()) out += "=" + p.default_text;
    }
    return out + ")";
  }
};

// By the function's record (the PyCFunction's self, a capsule); written at import only.
// Never destroyed: a call may come during interpreter shutdown.
std::unordered_map<PyObject*, Signature>& signatures() {
  static auto* map = new std::unordered_map<PyObject*, Signature>();
  return *map;
}

std::string trim(std::string_view s) {
  const size_t a = s.find_first_not_of(' ');
  const size_t b = s.find_last_not_of(' ');
  return a == std::string_view::npos ? "" : std::string(s.substr(a, b - a + 1));
}

// The parameters of "name(self: T, a: handle, b: handle = 0) -> R", split at commas
// outside brackets; false for a line that is not such a signature or takes *args.
bool read_signature(std::string_view line, Signature& sig) {
  if (line.substr(0, sig.name.size() + 1) != sig.name + "(") return false;
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  size_t i = sig.name.size() + 1;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (depth == 0 && (c == ',' || c == ')')) {
      if (!trim(cur).empty()) parts.push_back(trim(cur));
      cur.clear();
      if (c == ')') break;
      continue;
    }
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    cur += c;
  }
  if (i == line.size()) return false;
  for (size_t k = 0; k < parts.size(); ++k) {
    const std::string& p = parts[k];
    if (p == "*") {  // the rest are keyword-only
      sig.positional = sig.params.size();
      continue;
    }
    if (p[0] == '*') return false;  // takes anything: refuses by itself
    const size_t colon = p.find(':');
    if (colon == std::string::npos) return false;
    const std::string pname = trim(std::string_view(p).substr(0, colon));
    if (k == 0 && sig.is_method && pname == "self") continue;
    const size_t eq = p.find(" = ");
    const std::string type = trim(std::string_view(p).substr(
        colon + 1, eq == std::string::npos ? std::string::npos : eq - colon - 1));
    sig.params.push_back(
        {pname, type, eq == std::string::npos ? "" : trim(std::string_view(p).substr(eq + 3))});
  }
  return true;
}

std::string type_name(py::handle h) { return Py_TYPE(h.ptr())->tp_name; }

// What did not fit, in the order a reader would fix it.
std::string why(const Signature& sig, py::handle cls, const py::tuple& args, py::handle kwargs) {
  size_t first = 0;
  if (sig.is_method) {
    if (args.empty() || !py::isinstance(args[0], cls)) {
      return "self must be a " + sig.cls + ", got " +
             (args.empty() ? std::string("nothing") : type_name(args[0]));
    }
    first = 1;
  }
  const size_t positional = args.size() - first;
  const size_t capacity = std::min(sig.positional, sig.params.size());
  if (positional > capacity) {
    return "takes " + std::to_string(capacity) + " positional argument" +
           (capacity == 1 ? "" : "s") + ", " + std::to_string(positional) + " given";
  }
  std::vector<py::handle> given(sig.params.size());
  for (size_t i = 0; i < positional; ++i) given[i] = args[first + i];
  if (kwargs) {
    for (auto item : py::reinterpret_borrow<py::dict>(kwargs)) {
      const std::string key = py::str(item.first);
      size_t i = 0;
      while (i < sig.params.size() && sig.params[i].name != key) ++i;
      if (i == sig.params.size()) return "unknown keyword '" + key + "'";
      if (given[i]) return "'" + key + "' given twice (by position and by keyword)";
      given[i] = item.second;
    }
  }
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const Param& p = sig.params[i];
    if (!given[i] && p.default_text.empty()) return "missing argument '" + p.name + "'";
    if (given[i] && p.type == "str" && !PyUnicode_Check(given[i].ptr()) &&
        !PyBytes_Check(given[i].ptr())) {
      return p.name + " must be a str, got " + type_name(given[i]);
    }
  }
  return "an argument has the wrong type";
}

// pybind11's TypeError for a call no overload fits ("make(): incompatible function
// arguments ..."): exactly TypeError, not a subclass (simpler's own typed errors).
bool is_mismatch(PyObject* type, PyObject* value, const Signature& sig) {
  if (type != PyExc_TypeError || value == nullptr) return false;
  const std::string text = py::str(py::handle(value));
  const std::string prefix =
      (sig.name == "__init__" ? std::string("__init__") : sig.name) + "(): incompatible ";
  return text.rfind(prefix, 0) == 0;
}

// pybind11's dispatcher: one function for every pybind11 function (the record it gets as
// `self` says which); set once, at import.
PyCFunctionWithKeywords real_dispatch = nullptr;

// Installed as the function's ml_meth: pybind11's dispatcher first, unchanged; the rest
// runs only when it failed.
PyObject* dispatch(PyObject* self, PyObject* args, PyObject* kwargs) {
  PyObject* result = real_dispatch(self, args, kwargs);
  if (result != nullptr) return result;
  const Signature& sig = signatures().at(self);
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  PyErr_NormalizeException(&type, &value, &trace);
  bool mismatch = false;
  try {
    mismatch = is_mismatch(type, value, sig);
  } catch (const std::exception&) {  // an unreadable message: not pybind11's refusal
  }
  if (!mismatch) {
    PyErr_Restore(type, value, trace);
    return nullptr;
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(trace);
  try {
    const std::string message =
        sig.qualified() + ": " +
        why(sig, sig.owner, py::reinterpret_borrow<py::tuple>(args), kwargs) + "; call it as " +
        sig.shown();
    const py::object error = py::module_::import("simpler.errors").attr("SimplerTypeError");
    PyErr_SetObject(error.ptr(), error(message).ptr());
  } catch (py::error_already_set& e) {
    e.restore();  // simpler.errors missing (a broken install): that error is the news
  } catch (const std::exception& e) {  // nothing may unwind into CPython's C frames
    PyErr_SetString(PyExc_TypeError,
                    (sig.qualified() + ": the arguments do not fit (" + e.what() + ")").c_str());
  }
  return nullptr;
}

// ml_meth's declared type; METH_KEYWORDS says it takes kwargs (CPython's own idiom).
PyCFunction as_ml_meth(PyCFunctionWithKeywords f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

void translate(py::handle cls, const std::string& name, py::handle descriptor) {
  const bool is_static = PyObject_TypeCheck(descriptor.ptr(), &PyStaticMethod_Type) != 0;
  // The function itself, kept alive by the descriptor in the class's dict.
  const py::object inner =
      is_static ? descriptor.attr("__func__") : py::reinterpret_borrow<py::object>(descriptor);
  PyObject* func = inner.ptr();
  if (PyInstanceMethod_Check(func)) func = PyInstanceMethod_GET_FUNCTION(func);
  if (!PyCFunction_Check(func)) return;  // bound in Python: Python refuses by itself
  auto* cfunc = reinterpret_cast<PyCFunctionObject*>(func);
  PyMethodDef* def = cfunc->m_ml;
  if (def->ml_flags != (METH_VARARGS | METH_KEYWORDS) || def->ml_meth == as_ml_meth(&dispatch)) {
    return;  // not pybind11's dispatcher, or already translated
  }
  Signature sig;
  sig.cls = py::str(cls.attr("__name__"));
  sig.name = name;
  sig.is_method = !is_static;
  sig.owner = py::reinterpret_borrow<py::object>(cls);
  const std::string doc = def->ml_doc ? def->ml_doc : "";
  if (!read_signature(std::string_view(doc).substr(0, doc.find('\n')), sig)) return;
  const auto real =
      reinterpret_cast<PyCFunctionWithKeywords>(reinterpret_cast<void (*)()>(def->ml_meth));
  if (real_dispatch != nullptr && real != real_dispatch) return;  // not pybind11's own
  real_dispatch = real;
  signatures().emplace(cfunc->m_self, std::move(sig));
  def->ml_meth = as_ml_meth(&dispatch);
}

}  // namespace

void translate_call_mismatches(py::handle cls, const char* no_constructor) {
  const py::dict members = cls.attr("__dict__").attr("copy")();
  for (auto item : members) {
    const std::string name = py::str(item.first);
    if (name != "__init__" && name[0] == '_') continue;  // operators keep NotImplemented
    translate(cls, name, item.second);
  }
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
